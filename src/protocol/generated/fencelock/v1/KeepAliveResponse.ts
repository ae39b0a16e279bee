// Original file: proto/fencelock/v1/lock.proto

import type { HeldGrant as _fencelock_v1_HeldGrant, HeldGrant__Output as _fencelock_v1_HeldGrant__Output } from '../../fencelock/v1/HeldGrant';
import type { Long } from '@grpc/proto-loader';

/**
 * At most one response per request, none while the leader is not sure it still leads (the lease is then
 * not extended).
 */
export interface KeepAliveResponse {
  'sessionId'?: (string);
  /**
   * false: the session is unknown or has expired; it cannot come back
   */
  'alive'?: (boolean);
  /**
   * time left on the leader's deadline after this renewal
   */
  'remainingMs'?: (number | string | Long);
  /**
   * the request's renewal_id (0 from servers older than the field)
   */
  'renewalId'?: (number | string | Long);
  /**
   * With alive false, why when the node knows: REVOKED (an admin ended the session or deleted its user);
   * '' otherwise (expired, or unknown).
   */
  'reason'?: (string);
  /**
   * With alive true: the grants named in the request's `held` that an admin revoked (Lock.Revoke). The
   * client takes these locks as lost (reason REVOKED); the session goes on.
   */
  'revoked'?: (_fencelock_v1_HeldGrant)[];
}

/**
 * At most one response per request, none while the leader is not sure it still leads (the lease is then
 * not extended).
 */
export interface KeepAliveResponse__Output {
  'sessionId': (string);
  /**
   * false: the session is unknown or has expired; it cannot come back
   */
  'alive': (boolean);
  /**
   * time left on the leader's deadline after this renewal
   */
  'remainingMs': (string);
  /**
   * the request's renewal_id (0 from servers older than the field)
   */
  'renewalId': (string);
  /**
   * With alive false, why when the node knows: REVOKED (an admin ended the session or deleted its user);
   * '' otherwise (expired, or unknown).
   */
  'reason': (string);
  /**
   * With alive true: the grants named in the request's `held` that an admin revoked (Lock.Revoke). The
   * client takes these locks as lost (reason REVOKED); the session goes on.
   */
  'revoked': (_fencelock_v1_HeldGrant__Output)[];
}
