// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

/**
 * An open session as an admin sees it: never its secret id.
 */
export interface SessionSummary {
  /**
   * the public handle (16 hex characters), as Describe and Watch show holders
   */
  'handle'?: (string);
  /**
   * who opened it ('' for a session opened before auth was on)
   */
  'identity'?: (string);
  'clientName'?: (string);
  /**
   * held, sorted
   */
  'locks'?: (string)[];
  /**
   * queued for, sorted
   */
  'waiting'?: (string)[];
  /**
   * since it opened, by the leader's wall clock
   */
  'ageMs'?: (number | string | Long);
  'ttlMs'?: (number | string | Long);
  /**
   * as given at Session.Open
   */
  'labels'?: ({[key: string]: string});
}

/**
 * An open session as an admin sees it: never its secret id.
 */
export interface SessionSummary__Output {
  /**
   * the public handle (16 hex characters), as Describe and Watch show holders
   */
  'handle': (string);
  /**
   * who opened it ('' for a session opened before auth was on)
   */
  'identity': (string);
  'clientName': (string);
  /**
   * held, sorted
   */
  'locks': (string)[];
  /**
   * queued for, sorted
   */
  'waiting': (string)[];
  /**
   * since it opened, by the leader's wall clock
   */
  'ageMs': (string);
  'ttlMs': (string);
  /**
   * as given at Session.Open
   */
  'labels': ({[key: string]: string});
}
