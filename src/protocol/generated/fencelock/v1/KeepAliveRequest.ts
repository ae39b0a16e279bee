// Original file: proto/fencelock/v1/lock.proto

import type { HeldGrant as _fencelock_v1_HeldGrant, HeldGrant__Output as _fencelock_v1_HeldGrant__Output } from '../../fencelock/v1/HeldGrant';
import type { Long } from '@grpc/proto-loader';

export interface KeepAliveRequest {
  'sessionId'?: (string);
  /**
   * Chosen by the client, unique among the renewals on this stream (the library counts 1, 2, 3, ...); echoed
   * in the response, so that the client credits the lease from the send time of exactly the renewal that was
   * acknowledged. 0: not set.
   */
  'renewalId'?: (number | string | Long);
  /**
   * Grants of this session the client holds (at most 64; a client holding more names them in turns). The
   * answer lists those the session no longer holds under that token although it is open: an admin revoked
   * them (Lock.Revoke). Derived from the replicated state at each renewal, so any leader answers it alike.
   */
  'held'?: (_fencelock_v1_HeldGrant)[];
}

export interface KeepAliveRequest__Output {
  'sessionId': (string);
  /**
   * Chosen by the client, unique among the renewals on this stream (the library counts 1, 2, 3, ...); echoed
   * in the response, so that the client credits the lease from the send time of exactly the renewal that was
   * acknowledged. 0: not set.
   */
  'renewalId': (string);
  /**
   * Grants of this session the client holds (at most 64; a client holding more names them in turns). The
   * answer lists those the session no longer holds under that token although it is open: an admin revoked
   * them (Lock.Revoke). Derived from the replicated state at each renewal, so any leader answers it alike.
   */
  'held': (_fencelock_v1_HeldGrant__Output)[];
}
