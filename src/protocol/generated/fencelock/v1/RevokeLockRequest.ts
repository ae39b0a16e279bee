// Original file: proto/fencelock/v1/lock.proto

import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from '../../fencelock/v1/RequestHeader';
import type { Long } from '@grpc/proto-loader';

export interface RevokeLockRequest {
  'header'?: (_fencelock_v1_RequestHeader | null);
  'lock'?: (string);
  /**
   * why, for the audit log and the watch event: up to 256 bytes, may be empty
   */
  'reason'?: (string);
  /**
   * Revoke only while this is the current grant's token (from Describe), so that a revoke meant for a stuck
   * holder cannot end the grant of the holder after it. Unset (0): whatever grant is current.
   */
  'token'?: (number | string | Long);
  '_token'?: "token";
}

export interface RevokeLockRequest__Output {
  'header': (_fencelock_v1_RequestHeader__Output | null);
  'lock': (string);
  /**
   * why, for the audit log and the watch event: up to 256 bytes, may be empty
   */
  'reason': (string);
  /**
   * Revoke only while this is the current grant's token (from Describe), so that a revoke meant for a stuck
   * holder cannot end the grant of the holder after it. Unset (0): whatever grant is current.
   */
  'token'?: (string);
  '_token'?: "token";
}
