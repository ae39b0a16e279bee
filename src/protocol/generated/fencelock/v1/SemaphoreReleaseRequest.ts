// Original file: proto/fencelock/v1/lock.proto

import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from '../../fencelock/v1/RequestHeader';
import type { Long } from '@grpc/proto-loader';

export interface SemaphoreReleaseRequest {
  'header'?: (_fencelock_v1_RequestHeader | null);
  'name'?: (string);
  'sessionId'?: (string);
  'token'?: (number | string | Long);
}

export interface SemaphoreReleaseRequest__Output {
  'header': (_fencelock_v1_RequestHeader__Output | null);
  'name': (string);
  'sessionId': (string);
  'token': (string);
}
