// Original file: proto/fencelock/v1/lock.proto

import type { SessionInfo as _fencelock_v1_SessionInfo, SessionInfo__Output as _fencelock_v1_SessionInfo__Output } from '../../fencelock/v1/SessionInfo';
import type { Long } from '@grpc/proto-loader';

/**
 * A held permit as Describe shows it.
 */
export interface PermitHolder {
  'slot'?: (number);
  'token'?: (number | string | Long);
  /**
   * handle, client name and labels, as Lock.Describe shows a holder
   */
  'session'?: (_fencelock_v1_SessionInfo | null);
  /**
   * leader's clock when the granting entry was proposed
   */
  'grantedAtMs'?: (number | string | Long);
}

/**
 * A held permit as Describe shows it.
 */
export interface PermitHolder__Output {
  'slot': (number);
  'token': (string);
  /**
   * handle, client name and labels, as Lock.Describe shows a holder
   */
  'session': (_fencelock_v1_SessionInfo__Output | null);
  /**
   * leader's clock when the granting entry was proposed
   */
  'grantedAtMs': (string);
}
