// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface LockGrant {
  'lock'?: (string);
  'token'?: (number | string | Long);
}

export interface LockGrant__Output {
  'lock': (string);
  'token': (string);
}
