// Original file: proto/fencelock/v1/lock.proto

import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from '../../fencelock/v1/RequestHeader';
import type { Long } from '@grpc/proto-loader';

export interface ReleaseRequest {
  'header'?: (_fencelock_v1_RequestHeader | null);
  'lock'?: (string);
  'sessionId'?: (string);
  'token'?: (number | string | Long);
}

export interface ReleaseRequest__Output {
  'header': (_fencelock_v1_RequestHeader__Output | null);
  'lock': (string);
  'sessionId': (string);
  'token': (string);
}
