// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface AuthChangeResponse {
  /**
   * the log entry that applied the change
   */
  'index'?: (number | string | Long);
}

export interface AuthChangeResponse__Output {
  /**
   * the log entry that applied the change
   */
  'index': (string);
}
