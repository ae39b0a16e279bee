// Original file: proto/fencelock/v1/lock.proto


export interface ListLocksRequest {
  /**
   * 0..256 bytes; '' = every lock the caller may describe
   */
  'prefix'?: (string);
  /**
   * a lock name: the locks that sort after it (the next page)
   */
  'startAfter'?: (string);
  /**
   * 1..1000; 0 = 100
   */
  'limit'?: (number);
  /**
   * Also the locks that are neither held nor waited for but still known (they own keys of the fenced store,
   * so their latest token is kept). Idle locks without keys are forgotten and never listed.
   */
  'includeIdle'?: (boolean);
}

export interface ListLocksRequest__Output {
  /**
   * 0..256 bytes; '' = every lock the caller may describe
   */
  'prefix': (string);
  /**
   * a lock name: the locks that sort after it (the next page)
   */
  'startAfter': (string);
  /**
   * 1..1000; 0 = 100
   */
  'limit': (number);
  /**
   * Also the locks that are neither held nor waited for but still known (they own keys of the fenced store,
   * so their latest token is kept). Idle locks without keys are forgotten and never listed.
   */
  'includeIdle': (boolean);
}
