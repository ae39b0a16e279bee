// Original file: proto/fencelock/v1/lock.proto


// Original file: proto/fencelock/v1/lock.proto

export const _fencelock_v1_Op_Type = {
  TYPE_UNSPECIFIED: 'TYPE_UNSPECIFIED',
  PUT: 'PUT',
  DELETE: 'DELETE',
} as const;

export type _fencelock_v1_Op_Type =
  | 'TYPE_UNSPECIFIED'
  | 0
  | 'PUT'
  | 1
  | 'DELETE'
  | 2

export type _fencelock_v1_Op_Type__Output = typeof _fencelock_v1_Op_Type[keyof typeof _fencelock_v1_Op_Type]

export interface Op {
  'type'?: (_fencelock_v1_Op_Type);
  /**
   * 1..512 bytes
   */
  'key'?: (string);
  /**
   * PUT only, up to 64 KiB
   */
  'value'?: (Buffer | Uint8Array | string);
}

export interface Op__Output {
  'type': (_fencelock_v1_Op_Type__Output);
  /**
   * 1..512 bytes
   */
  'key': (string);
  /**
   * PUT only, up to 64 KiB
   */
  'value': (Buffer);
}
