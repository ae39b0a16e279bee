// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface WriteResponse {
  /**
   * log index at which the write applied
   */
  'index'?: (number | string | Long);
}

export interface WriteResponse__Output {
  /**
   * log index at which the write applied
   */
  'index': (string);
}
