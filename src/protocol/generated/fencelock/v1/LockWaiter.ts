// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface LockWaiter {
  /**
   * public handle
   */
  'session'?: (string);
  /**
   * since its Acquire queued it, by the leader's clock (0 when unknown: queued before an upgrade)
   */
  'waitingMs'?: (number | string | Long);
}

export interface LockWaiter__Output {
  /**
   * public handle
   */
  'session': (string);
  /**
   * since its Acquire queued it, by the leader's clock (0 when unknown: queued before an upgrade)
   */
  'waitingMs': (string);
}
