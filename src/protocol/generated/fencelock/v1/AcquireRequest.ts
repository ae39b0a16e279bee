// Original file: proto/fencelock/v1/lock.proto

import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from '../../fencelock/v1/RequestHeader';
import type { Long } from '@grpc/proto-loader';

export interface AcquireRequest {
  'header'?: (_fencelock_v1_RequestHeader | null);
  /**
   * 1..256 bytes
   */
  'lock'?: (string);
  'sessionId'?: (string);
  /**
   * 0 = try once; otherwise wait in the FIFO queue up to this long
   */
  'waitTimeoutMs'?: (number | string | Long);
  /**
   * Lock-delay of this grant, 0..60000 ms (0 = none): when the grant ends by expiry of the session or by a
   * revoke (not by Release or Session.Close), nobody is granted the lock for this long. A try-acquire
   * during a delay is refused FAILED_PRECONDITION LOCK_DELAYED; a waiting one queues.
   */
  'lockDelayMs'?: (number | string | Long);
}

export interface AcquireRequest__Output {
  'header': (_fencelock_v1_RequestHeader__Output | null);
  /**
   * 1..256 bytes
   */
  'lock': (string);
  'sessionId': (string);
  /**
   * 0 = try once; otherwise wait in the FIFO queue up to this long
   */
  'waitTimeoutMs': (string);
  /**
   * Lock-delay of this grant, 0..60000 ms (0 = none): when the grant ends by expiry of the session or by a
   * revoke (not by Release or Session.Close), nobody is granted the lock for this long. A try-acquire
   * during a delay is refused FAILED_PRECONDITION LOCK_DELAYED; a waiting one queues.
   */
  'lockDelayMs': (string);
}
