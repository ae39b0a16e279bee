// Original file: proto/fencelock/v1/lock.proto


/**
 * A session as callers who may describe a lock see it: its public handle and what its client said of itself
 * at Session.Open. Never the secret session id. Describe, Watch and the lock listing share it.
 */
export interface SessionInfo {
  /**
   * the public handle, as holder_session
   */
  'handle'?: (string);
  'clientName'?: (string);
  'labels'?: ({[key: string]: string});
}

/**
 * A session as callers who may describe a lock see it: its public handle and what its client said of itself
 * at Session.Open. Never the secret session id. Describe, Watch and the lock listing share it.
 */
export interface SessionInfo__Output {
  /**
   * the public handle, as holder_session
   */
  'handle': (string);
  'clientName': (string);
  'labels': ({[key: string]: string});
}
