// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface HeldGrant {
  'lock'?: (string);
  'token'?: (number | string | Long);
}

export interface HeldGrant__Output {
  'lock': (string);
  'token': (string);
}
