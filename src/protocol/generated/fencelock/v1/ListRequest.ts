// Original file: proto/fencelock/v1/lock.proto


export interface ListRequest {
  'prefix'?: (string);
  'startAfter'?: (string);
  /**
   * default 100, at most 1000
   */
  'limit'?: (number);
  /**
   * also list deleted keys (deleted = true), which keep their lock and watermark
   */
  'includeDeleted'?: (boolean);
}

export interface ListRequest__Output {
  'prefix': (string);
  'startAfter': (string);
  /**
   * default 100, at most 1000
   */
  'limit': (number);
  /**
   * also list deleted keys (deleted = true), which keep their lock and watermark
   */
  'includeDeleted': (boolean);
}
