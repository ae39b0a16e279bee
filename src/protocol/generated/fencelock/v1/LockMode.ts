// Original file: proto/fencelock/v1/lock.proto

export const LockMode = {
  LOCK_MODE_EXCLUSIVE: 'LOCK_MODE_EXCLUSIVE',
  LOCK_MODE_SHARED: 'LOCK_MODE_SHARED',
} as const;

export type LockMode =
  | 'LOCK_MODE_EXCLUSIVE'
  | 0
  | 'LOCK_MODE_SHARED'
  | 1

export type LockMode__Output = typeof LockMode[keyof typeof LockMode]
