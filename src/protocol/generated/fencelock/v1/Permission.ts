// Original file: proto/fencelock/v1/lock.proto

export const Permission = {
  PERMISSION_UNSPECIFIED: 'PERMISSION_UNSPECIFIED',
  /**
   * acquire, release, describe and watch locks whose name starts with the prefix
   */
  LOCK: 'LOCK',
  /**
   * fenced writes of keys that start with the prefix
   */
  WRITE: 'WRITE',
  /**
   * get and list keys that start with the prefix (a list needs the whole listed prefix)
   */
  READ: 'READ',
  /**
   * manage users, roles, tokens and quotas (prefix must be empty)
   */
  ADMIN: 'ADMIN',
} as const;

export type Permission =
  | 'PERMISSION_UNSPECIFIED'
  | 0
  /**
   * acquire, release, describe and watch locks whose name starts with the prefix
   */
  | 'LOCK'
  | 1
  /**
   * fenced writes of keys that start with the prefix
   */
  | 'WRITE'
  | 2
  /**
   * get and list keys that start with the prefix (a list needs the whole listed prefix)
   */
  | 'READ'
  | 3
  /**
   * manage users, roles, tokens and quotas (prefix must be empty)
   */
  | 'ADMIN'
  | 4

export type Permission__Output = typeof Permission[keyof typeof Permission]
