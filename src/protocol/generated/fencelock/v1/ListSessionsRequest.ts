// Original file: proto/fencelock/v1/lock.proto


export interface ListSessionsRequest {
  /**
   * a handle: the sessions whose handles sort after it (the next page)
   */
  'startAfter'?: (string);
  /**
   * 1..1000; 0 = 100
   */
  'limit'?: (number);
}

export interface ListSessionsRequest__Output {
  /**
   * a handle: the sessions whose handles sort after it (the next page)
   */
  'startAfter': (string);
  /**
   * 1..1000; 0 = 100
   */
  'limit': (number);
}
