// Original file: proto/fencelock/v1/lock.proto

import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from '../../fencelock/v1/RequestHeader';
import type { Op as _fencelock_v1_Op, Op__Output as _fencelock_v1_Op__Output } from '../../fencelock/v1/Op';
import type { Long } from '@grpc/proto-loader';

/**
 * A fenced write: every op applies atomically, or none does. It applies when session_id holds lock under
 * exactly token; otherwise it is refused for the first of these that holds (README "The fencing rules"):
 * WRONG_LOCK       a touched key belongs to another lock (metadata fencelock-key, fencelock-key-lock), or
 * token is above the lock's latest token (it cannot have been issued for this lock). Fix
 * the call. A key belongs for good to the lock of its first write, also once deleted.
 * STALE_TOKEN      token is below the lock's latest token: a newer grant exists. The server keeps only the
 * latest token of a lock, so a lower token issued for another lock is refused so too. Stop.
 * UNKNOWN_SESSION  (NOT_FOUND) token is the latest; the session is not open and was not that grant's holder.
 * NOT_HOLDER       token is the latest; the session is open but was not that grant's holder (the token is
 * another session's, its grant live or ended).
 * LOCK_NOT_HELD    the session was that grant's holder and the grant ended (released, closed, expired),
 * with no newer grant yet; or the lock was forgotten (free, no keys). Acquire again.
 * Each is FAILED_PRECONDITION, but UNKNOWN_SESSION is NOT_FOUND.
 */
export interface WriteRequest {
  'header'?: (_fencelock_v1_RequestHeader | null);
  'lock'?: (string);
  'token'?: (number | string | Long);
  'sessionId'?: (string);
  /**
   * 1..64
   */
  'ops'?: (_fencelock_v1_Op)[];
  /**
   * A write under a semaphore's permit (issue 33): `lock` names the semaphore, `slot` the permit's slot and
   * `token` its token. Its keys are bound to (semaphore, slot) for good, and fenced by that slot's latest
   * token alone: the rules above with the slot in the place of the lock (docs/architecture.md#semaphores).
   */
  'semaphore'?: (boolean);
  'slot'?: (number);
}

/**
 * A fenced write: every op applies atomically, or none does. It applies when session_id holds lock under
 * exactly token; otherwise it is refused for the first of these that holds (README "The fencing rules"):
 * WRONG_LOCK       a touched key belongs to another lock (metadata fencelock-key, fencelock-key-lock), or
 * token is above the lock's latest token (it cannot have been issued for this lock). Fix
 * the call. A key belongs for good to the lock of its first write, also once deleted.
 * STALE_TOKEN      token is below the lock's latest token: a newer grant exists. The server keeps only the
 * latest token of a lock, so a lower token issued for another lock is refused so too. Stop.
 * UNKNOWN_SESSION  (NOT_FOUND) token is the latest; the session is not open and was not that grant's holder.
 * NOT_HOLDER       token is the latest; the session is open but was not that grant's holder (the token is
 * another session's, its grant live or ended).
 * LOCK_NOT_HELD    the session was that grant's holder and the grant ended (released, closed, expired),
 * with no newer grant yet; or the lock was forgotten (free, no keys). Acquire again.
 * Each is FAILED_PRECONDITION, but UNKNOWN_SESSION is NOT_FOUND.
 */
export interface WriteRequest__Output {
  'header': (_fencelock_v1_RequestHeader__Output | null);
  'lock': (string);
  'token': (string);
  'sessionId': (string);
  /**
   * 1..64
   */
  'ops': (_fencelock_v1_Op__Output)[];
  /**
   * A write under a semaphore's permit (issue 33): `lock` names the semaphore, `slot` the permit's slot and
   * `token` its token. Its keys are bound to (semaphore, slot) for good, and fenced by that slot's latest
   * token alone: the rules above with the slot in the place of the lock (docs/architecture.md#semaphores).
   */
  'semaphore': (boolean);
  'slot': (number);
}
