// Original file: proto/fencelock/v1/lock.proto

import type { LockWaiter as _fencelock_v1_LockWaiter, LockWaiter__Output as _fencelock_v1_LockWaiter__Output } from '../../fencelock/v1/LockWaiter';
import type { SessionInfo as _fencelock_v1_SessionInfo, SessionInfo__Output as _fencelock_v1_SessionInfo__Output } from '../../fencelock/v1/SessionInfo';
import type { Long } from '@grpc/proto-loader';

export interface LockSummary {
  'name'?: (string);
  'held'?: (boolean);
  /**
   * public handle, '' when free
   */
  'holderSession'?: (string);
  /**
   * the current grant's token, 0 when free
   */
  'token'?: (number | string | Long);
  /**
   * leader's clock when the granting entry was proposed, 0 when free
   */
  'grantedAtMs'?: (number | string | Long);
  /**
   * since granted_at_ms, by the serving node's clock at the read
   */
  'heldForMs'?: (number | string | Long);
  /**
   * highest token issued for this lock
   */
  'latestToken'?: (number | string | Long);
  /**
   * The first MAX_LIST_WAITERS (100) waiters, FIFO order; waiter_count says how many are queued in all.
   */
  'waiters'?: (_fencelock_v1_LockWaiter)[];
  'waiterCount'?: (number);
  /**
   * Set while held: the holder's handle, client name and labels, as Describe shows them. A listing holds only
   * locks the caller may describe, so it shows labels to no one Describe would not.
   */
  'holder'?: (_fencelock_v1_SessionInfo | null);
  /**
   * In a lock-delay: as in DescribeResponse (0 and 0 when not delayed).
   */
  'delayedUntilMs'?: (number | string | Long);
  'delayRemainingMs'?: (number | string | Long);
}

export interface LockSummary__Output {
  'name': (string);
  'held': (boolean);
  /**
   * public handle, '' when free
   */
  'holderSession': (string);
  /**
   * the current grant's token, 0 when free
   */
  'token': (string);
  /**
   * leader's clock when the granting entry was proposed, 0 when free
   */
  'grantedAtMs': (string);
  /**
   * since granted_at_ms, by the serving node's clock at the read
   */
  'heldForMs': (string);
  /**
   * highest token issued for this lock
   */
  'latestToken': (string);
  /**
   * The first MAX_LIST_WAITERS (100) waiters, FIFO order; waiter_count says how many are queued in all.
   */
  'waiters': (_fencelock_v1_LockWaiter__Output)[];
  'waiterCount': (number);
  /**
   * Set while held: the holder's handle, client name and labels, as Describe shows them. A listing holds only
   * locks the caller may describe, so it shows labels to no one Describe would not.
   */
  'holder': (_fencelock_v1_SessionInfo__Output | null);
  /**
   * In a lock-delay: as in DescribeResponse (0 and 0 when not delayed).
   */
  'delayedUntilMs': (string);
  'delayRemainingMs': (string);
}
