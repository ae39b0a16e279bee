// Original file: proto/fencelock/v1/lock.proto


export interface RevokeSessionResponse {
  /**
   * the locks it held, now handed to their next waiters or free
   */
  'released'?: (string)[];
}

export interface RevokeSessionResponse__Output {
  /**
   * the locks it held, now handed to their next waiters or free
   */
  'released': (string)[];
}
