// Original file: proto/fencelock/v1/lock.proto

import type { AcquireRequest as _fencelock_v1_AcquireRequest, AcquireRequest__Output as _fencelock_v1_AcquireRequest__Output } from '../../fencelock/v1/AcquireRequest';
import type { ReleaseRequest as _fencelock_v1_ReleaseRequest, ReleaseRequest__Output as _fencelock_v1_ReleaseRequest__Output } from '../../fencelock/v1/ReleaseRequest';
import type { WriteRequest as _fencelock_v1_WriteRequest, WriteRequest__Output as _fencelock_v1_WriteRequest__Output } from '../../fencelock/v1/WriteRequest';
import type { GetRequest as _fencelock_v1_GetRequest, GetRequest__Output as _fencelock_v1_GetRequest__Output } from '../../fencelock/v1/GetRequest';
import type { SemaphoreAcquireRequest as _fencelock_v1_SemaphoreAcquireRequest, SemaphoreAcquireRequest__Output as _fencelock_v1_SemaphoreAcquireRequest__Output } from '../../fencelock/v1/SemaphoreAcquireRequest';
import type { SemaphoreReleaseRequest as _fencelock_v1_SemaphoreReleaseRequest, SemaphoreReleaseRequest__Output as _fencelock_v1_SemaphoreReleaseRequest__Output } from '../../fencelock/v1/SemaphoreReleaseRequest';
import type { AcquireAllRequest as _fencelock_v1_AcquireAllRequest, AcquireAllRequest__Output as _fencelock_v1_AcquireAllRequest__Output } from '../../fencelock/v1/AcquireAllRequest';
import type { Long } from '@grpc/proto-loader';

export interface CallRequest {
  /**
   * chosen by the client, unique among its calls in flight on this stream
   */
  'callId'?: (number | string | Long);
  /**
   * the call's deadline, as a unary call's; 0 = none
   */
  'timeoutMs'?: (number);
  'acquire'?: (_fencelock_v1_AcquireRequest | null);
  'release'?: (_fencelock_v1_ReleaseRequest | null);
  'write'?: (_fencelock_v1_WriteRequest | null);
  'get'?: (_fencelock_v1_GetRequest | null);
  'semaphoreAcquire'?: (_fencelock_v1_SemaphoreAcquireRequest | null);
  'semaphoreRelease'?: (_fencelock_v1_SemaphoreReleaseRequest | null);
  'acquireAll'?: (_fencelock_v1_AcquireAllRequest | null);
  /**
   * A batch: each element an encoded CallRequest (one call, never a batch), checked and decoded on its
   * own, so a call that cannot be decoded is refused alone with its call_id. A batch sets nothing else.
   */
  'calls'?: (Buffer | Uint8Array | string)[];
  /**
   * The caller's W3C trace context for this call alone (docs/tracing.md), as a unary call carries it in
   * metadata: set only while the client traces; the node's span of the call is its child. Empty: none.
   */
  'traceparent'?: (string);
  'tracestate'?: (string);
  'call'?: "acquire"|"release"|"write"|"get"|"semaphoreAcquire"|"semaphoreRelease"|"acquireAll";
}

export interface CallRequest__Output {
  /**
   * chosen by the client, unique among its calls in flight on this stream
   */
  'callId': (string);
  /**
   * the call's deadline, as a unary call's; 0 = none
   */
  'timeoutMs': (number);
  'acquire'?: (_fencelock_v1_AcquireRequest__Output | null);
  'release'?: (_fencelock_v1_ReleaseRequest__Output | null);
  'write'?: (_fencelock_v1_WriteRequest__Output | null);
  'get'?: (_fencelock_v1_GetRequest__Output | null);
  'semaphoreAcquire'?: (_fencelock_v1_SemaphoreAcquireRequest__Output | null);
  'semaphoreRelease'?: (_fencelock_v1_SemaphoreReleaseRequest__Output | null);
  'acquireAll'?: (_fencelock_v1_AcquireAllRequest__Output | null);
  /**
   * A batch: each element an encoded CallRequest (one call, never a batch), checked and decoded on its
   * own, so a call that cannot be decoded is refused alone with its call_id. A batch sets nothing else.
   */
  'calls': (Buffer)[];
  /**
   * The caller's W3C trace context for this call alone (docs/tracing.md), as a unary call carries it in
   * metadata: set only while the client traces; the node's span of the call is its child. Empty: none.
   */
  'traceparent': (string);
  'tracestate': (string);
  'call'?: "acquire"|"release"|"write"|"get"|"semaphoreAcquire"|"semaphoreRelease"|"acquireAll";
}
