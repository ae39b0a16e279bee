// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface ReleaseResponse {
  /**
   * public handle of the waiter the lock was handed to, if any
   */
  'nextHolderSession'?: (string);
  'nextToken'?: (number | string | Long);
}

export interface ReleaseResponse__Output {
  /**
   * public handle of the waiter the lock was handed to, if any
   */
  'nextHolderSession': (string);
  'nextToken': (string);
}
