// Original file: proto/fencelock/v1/lock.proto

import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from '../../fencelock/v1/RequestHeader';
import type { Long } from '@grpc/proto-loader';

export interface SemaphoreAcquireRequest {
  'header'?: (_fencelock_v1_RequestHeader | null);
  /**
   * 1..256 bytes
   */
  'name'?: (string);
  'sessionId'?: (string);
  /**
   * 1..1024: the number of permits; the first Acquire of an idle semaphore sets it
   */
  'permits'?: (number);
  /**
   * 0 = try once; otherwise wait in the FIFO queue up to this long
   */
  'waitTimeoutMs'?: (number | string | Long);
}

export interface SemaphoreAcquireRequest__Output {
  'header': (_fencelock_v1_RequestHeader__Output | null);
  /**
   * 1..256 bytes
   */
  'name': (string);
  'sessionId': (string);
  /**
   * 1..1024: the number of permits; the first Acquire of an idle semaphore sets it
   */
  'permits': (number);
  /**
   * 0 = try once; otherwise wait in the FIFO queue up to this long
   */
  'waitTimeoutMs': (string);
}
