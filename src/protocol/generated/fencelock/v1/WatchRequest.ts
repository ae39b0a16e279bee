// Original file: proto/fencelock/v1/lock.proto


export interface WatchRequest {
  'lock'?: (string);
  /**
   * Issue 33: watch the permits of this semaphore instead of a lock (set exactly one of lock and semaphore;
   * the `lock` permission on the name, as for Describe). Its events name `semaphore` and `slot`, `lock` is ''.
   */
  'semaphore'?: (string);
}

export interface WatchRequest__Output {
  'lock': (string);
  /**
   * Issue 33: watch the permits of this semaphore instead of a lock (set exactly one of lock and semaphore;
   * the `lock` permission on the name, as for Describe). Its events name `semaphore` and `slot`, `lock` is ''.
   */
  'semaphore': (string);
}
