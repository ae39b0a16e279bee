// Original file: proto/fencelock/v1/lock.proto

import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from '../../fencelock/v1/RequestHeader';

export interface CloseSessionRequest {
  'header'?: (_fencelock_v1_RequestHeader | null);
  'sessionId'?: (string);
}

export interface CloseSessionRequest__Output {
  'header': (_fencelock_v1_RequestHeader__Output | null);
  'sessionId': (string);
}
