// Original file: proto/fencelock/v1/lock.proto

import type { SessionInfo as _fencelock_v1_SessionInfo, SessionInfo__Output as _fencelock_v1_SessionInfo__Output } from '../../fencelock/v1/SessionInfo';
import type { Long } from '@grpc/proto-loader';

/**
 * A shared grant as Describe shows it: the holder and the token of its own grant.
 */
export interface SharedHolder {
  'session'?: (_fencelock_v1_SessionInfo | null);
  'token'?: (number | string | Long);
  'grantedAtMs'?: (number | string | Long);
}

/**
 * A shared grant as Describe shows it: the holder and the token of its own grant.
 */
export interface SharedHolder__Output {
  'session': (_fencelock_v1_SessionInfo__Output | null);
  'token': (string);
  'grantedAtMs': (string);
}
