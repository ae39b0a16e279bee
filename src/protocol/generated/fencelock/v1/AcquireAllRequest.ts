// Original file: proto/fencelock/v1/lock.proto

import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from '../../fencelock/v1/RequestHeader';
import type { Long } from '@grpc/proto-loader';

export interface AcquireAllRequest {
  'header'?: (_fencelock_v1_RequestHeader | null);
  /**
   * 1..64 distinct names (MAX_LOCKS_PER_ACQUIRE_ALL); each needs the lock permission
   */
  'locks'?: (string)[];
  'sessionId'?: (string);
  /**
   * 0 = try once; otherwise wait in every lock's FIFO queue up to this long
   */
  'waitTimeoutMs'?: (number | string | Long);
}

export interface AcquireAllRequest__Output {
  'header': (_fencelock_v1_RequestHeader__Output | null);
  /**
   * 1..64 distinct names (MAX_LOCKS_PER_ACQUIRE_ALL); each needs the lock permission
   */
  'locks': (string)[];
  'sessionId': (string);
  /**
   * 0 = try once; otherwise wait in every lock's FIFO queue up to this long
   */
  'waitTimeoutMs': (string);
}
