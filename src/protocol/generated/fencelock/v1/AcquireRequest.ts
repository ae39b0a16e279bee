// Original file: proto/fencelock/v1/lock.proto

import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from '../../fencelock/v1/RequestHeader';
import type { LockMode as _fencelock_v1_LockMode, LockMode__Output as _fencelock_v1_LockMode__Output } from '../../fencelock/v1/LockMode';
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
  /**
   * EXCLUSIVE (default): one holder. SHARED: held together with other shared holders, each grant with its
   * own token; never with an exclusive holder; FIFO, a waiting exclusive request is not overtaken by later
   * shared ones; a shared grant's writes are refused SHARED_GRANT; no lock_delay_ms with SHARED.
   */
  'mode'?: (_fencelock_v1_LockMode);
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
  /**
   * EXCLUSIVE (default): one holder. SHARED: held together with other shared holders, each grant with its
   * own token; never with an exclusive holder; FIFO, a waiting exclusive request is not overtaken by later
   * shared ones; a shared grant's writes are refused SHARED_GRANT; no lock_delay_ms with SHARED.
   */
  'mode': (_fencelock_v1_LockMode__Output);
}
