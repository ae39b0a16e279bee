// Original file: proto/fencelock/v1/lock.proto

import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from '../../fencelock/v1/RequestHeader';
import type { Long } from '@grpc/proto-loader';

export interface OpenSessionRequest {
  'header'?: (_fencelock_v1_RequestHeader | null);
  /**
   * bounds in the README (default 3,000..300,000 ms)
   */
  'ttlMs'?: (number | string | Long);
  /**
   * informational, up to 128 bytes
   */
  'clientName'?: (string);
}

export interface OpenSessionRequest__Output {
  'header': (_fencelock_v1_RequestHeader__Output | null);
  /**
   * bounds in the README (default 3,000..300,000 ms)
   */
  'ttlMs': (string);
  /**
   * informational, up to 128 bytes
   */
  'clientName': (string);
}
