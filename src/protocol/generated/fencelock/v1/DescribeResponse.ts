// Original file: proto/fencelock/v1/lock.proto

import type { SessionInfo as _fencelock_v1_SessionInfo, SessionInfo__Output as _fencelock_v1_SessionInfo__Output } from '../../fencelock/v1/SessionInfo';
import type { SharedHolder as _fencelock_v1_SharedHolder, SharedHolder__Output as _fencelock_v1_SharedHolder__Output } from '../../fencelock/v1/SharedHolder';
import type { Long } from '@grpc/proto-loader';

export interface DescribeResponse {
  'held'?: (boolean);
  /**
   * public handle
   */
  'holderSession'?: (string);
  'token'?: (number | string | Long);
  /**
   * leader's clock when the granting entry was proposed
   */
  'grantedAtMs'?: (number | string | Long);
  /**
   * public handles, FIFO order
   */
  'waiters'?: (string)[];
  /**
   * Highest token issued for this lock. 0 when the lock is unknown: never granted, or idle (not held, no
   * waiters) and owning no keys, whose record the server may forget. Keys pin their lock's record, so a
   * key's watermark never goes back.
   */
  'latestToken'?: (number | string | Long);
  /**
   * set while held: the holder's handle, client name and labels
   */
  'holder'?: (_fencelock_v1_SessionInfo | null);
  /**
   * the waiters as in `waiters`, with their names and labels
   */
  'waiterSessions'?: (_fencelock_v1_SessionInfo)[];
  /**
   * while held: the lock-delay the current grant asked for (0 = none)
   */
  'lockDelayMs'?: (number | string | Long);
  /**
   * In a lock-delay (free, granted to nobody until it ends): when it ends by the clock of the leader that
   * started it, and the time left by the serving node's clock. 0 and 0 when not delayed. A leader change
   * times the delay afresh, so it may end later than delayed_until_ms (the time left then reads 0).
   */
  'delayedUntilMs'?: (number | string | Long);
  'delayRemainingMs'?: (number | string | Long);
  /**
   * The shared grants in force, in grant order (held is false while only shared holders hold the lock).
   */
  'sharedHolders'?: (_fencelock_v1_SharedHolder)[];
  /**
   * Which of `waiters` (same order) wait for a shared grant.
   */
  'waiterShared'?: (boolean)[];
}

export interface DescribeResponse__Output {
  'held': (boolean);
  /**
   * public handle
   */
  'holderSession': (string);
  'token': (string);
  /**
   * leader's clock when the granting entry was proposed
   */
  'grantedAtMs': (string);
  /**
   * public handles, FIFO order
   */
  'waiters': (string)[];
  /**
   * Highest token issued for this lock. 0 when the lock is unknown: never granted, or idle (not held, no
   * waiters) and owning no keys, whose record the server may forget. Keys pin their lock's record, so a
   * key's watermark never goes back.
   */
  'latestToken': (string);
  /**
   * set while held: the holder's handle, client name and labels
   */
  'holder': (_fencelock_v1_SessionInfo__Output | null);
  /**
   * the waiters as in `waiters`, with their names and labels
   */
  'waiterSessions': (_fencelock_v1_SessionInfo__Output)[];
  /**
   * while held: the lock-delay the current grant asked for (0 = none)
   */
  'lockDelayMs': (string);
  /**
   * In a lock-delay (free, granted to nobody until it ends): when it ends by the clock of the leader that
   * started it, and the time left by the serving node's clock. 0 and 0 when not delayed. A leader change
   * times the delay afresh, so it may end later than delayed_until_ms (the time left then reads 0).
   */
  'delayedUntilMs': (string);
  'delayRemainingMs': (string);
  /**
   * The shared grants in force, in grant order (held is false while only shared holders hold the lock).
   */
  'sharedHolders': (_fencelock_v1_SharedHolder__Output)[];
  /**
   * Which of `waiters` (same order) wait for a shared grant.
   */
  'waiterShared': (boolean)[];
}
