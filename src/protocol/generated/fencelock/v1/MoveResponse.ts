// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface MoveResponse {
  'moved'?: (number | string | Long);
  'index'?: (number | string | Long);
}

export interface MoveResponse__Output {
  'moved': (string);
  'index': (string);
}
