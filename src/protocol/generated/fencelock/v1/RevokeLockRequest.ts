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
   * holder cannot end the grant of the holder after it. 0 (unset): whatever grant is current. Not `optional`:
   * tokens start at 1, and proto3 `optional` is refused by the older protoc that clients in other languages
   * may generate with (Debian's grpc_tools; test/contract/python.test.ts).
   */
  'token'?: (number | string | Long);
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
   * holder cannot end the grant of the holder after it. 0 (unset): whatever grant is current. Not `optional`:
   * tokens start at 1, and proto3 `optional` is refused by the older protoc that clients in other languages
   * may generate with (Debian's grpc_tools; test/contract/python.test.ts).
   */
  'token': (string);
}
