// Original file: proto/fencelock/v1/lock.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { SemaphoreAcquireRequest as _fencelock_v1_SemaphoreAcquireRequest, SemaphoreAcquireRequest__Output as _fencelock_v1_SemaphoreAcquireRequest__Output } from '../../fencelock/v1/SemaphoreAcquireRequest';
import type { SemaphoreAcquireResponse as _fencelock_v1_SemaphoreAcquireResponse, SemaphoreAcquireResponse__Output as _fencelock_v1_SemaphoreAcquireResponse__Output } from '../../fencelock/v1/SemaphoreAcquireResponse';
import type { SemaphoreDescribeRequest as _fencelock_v1_SemaphoreDescribeRequest, SemaphoreDescribeRequest__Output as _fencelock_v1_SemaphoreDescribeRequest__Output } from '../../fencelock/v1/SemaphoreDescribeRequest';
import type { SemaphoreDescribeResponse as _fencelock_v1_SemaphoreDescribeResponse, SemaphoreDescribeResponse__Output as _fencelock_v1_SemaphoreDescribeResponse__Output } from '../../fencelock/v1/SemaphoreDescribeResponse';
import type { SemaphoreReleaseRequest as _fencelock_v1_SemaphoreReleaseRequest, SemaphoreReleaseRequest__Output as _fencelock_v1_SemaphoreReleaseRequest__Output } from '../../fencelock/v1/SemaphoreReleaseRequest';
import type { SemaphoreReleaseResponse as _fencelock_v1_SemaphoreReleaseResponse, SemaphoreReleaseResponse__Output as _fencelock_v1_SemaphoreReleaseResponse__Output } from '../../fencelock/v1/SemaphoreReleaseResponse';

/**
 * Semaphores (issue 33; docs/architecture.md#semaphores): N permits of one name, each taken in a slot
 * 0..N-1 under a token of its own. A namespace of its own (the semaphore `pool` and the lock `pool` are
 * two resources); permissions as for locks (`lock` on the name). Fencing is per slot: downstream resources
 * keep a watermark per (semaphore, slot) and refuse fence < token.
 */
export interface SemaphoreClient extends grpc.Client {
  /**
   * A permit for the session: in the lowest free slot, or the session's own (re-entrant: its slot and
   * token again). All taken: with wait_timeout_ms 0, acquired false; otherwise FIFO wait up to that long
   * (DEADLINE_EXCEEDED when it passes, the waiter removed). FAILED_PRECONDITION PERMITS_MISMATCH (message
   * "permits N", the number in force) while permits are held or waited for under another number.
   */
  Acquire(argument: _fencelock_v1_SemaphoreAcquireRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_SemaphoreAcquireResponse__Output>): grpc.ClientUnaryCall;
  Acquire(argument: _fencelock_v1_SemaphoreAcquireRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_SemaphoreAcquireResponse__Output>): grpc.ClientUnaryCall;
  Acquire(argument: _fencelock_v1_SemaphoreAcquireRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_SemaphoreAcquireResponse__Output>): grpc.ClientUnaryCall;
  Acquire(argument: _fencelock_v1_SemaphoreAcquireRequest, callback: grpc.requestCallback<_fencelock_v1_SemaphoreAcquireResponse__Output>): grpc.ClientUnaryCall;
  /**
   * A permit for the session: in the lowest free slot, or the session's own (re-entrant: its slot and
   * token again). All taken: with wait_timeout_ms 0, acquired false; otherwise FIFO wait up to that long
   * (DEADLINE_EXCEEDED when it passes, the waiter removed). FAILED_PRECONDITION PERMITS_MISMATCH (message
   * "permits N", the number in force) while permits are held or waited for under another number.
   */
  acquire(argument: _fencelock_v1_SemaphoreAcquireRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_SemaphoreAcquireResponse__Output>): grpc.ClientUnaryCall;
  acquire(argument: _fencelock_v1_SemaphoreAcquireRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_SemaphoreAcquireResponse__Output>): grpc.ClientUnaryCall;
  acquire(argument: _fencelock_v1_SemaphoreAcquireRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_SemaphoreAcquireResponse__Output>): grpc.ClientUnaryCall;
  acquire(argument: _fencelock_v1_SemaphoreAcquireRequest, callback: grpc.requestCallback<_fencelock_v1_SemaphoreAcquireResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Read like Lock.Describe (linearizable), behind the `lock` permission on the name.
   */
  Describe(argument: _fencelock_v1_SemaphoreDescribeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_SemaphoreDescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _fencelock_v1_SemaphoreDescribeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_SemaphoreDescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _fencelock_v1_SemaphoreDescribeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_SemaphoreDescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _fencelock_v1_SemaphoreDescribeRequest, callback: grpc.requestCallback<_fencelock_v1_SemaphoreDescribeResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Read like Lock.Describe (linearizable), behind the `lock` permission on the name.
   */
  describe(argument: _fencelock_v1_SemaphoreDescribeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_SemaphoreDescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _fencelock_v1_SemaphoreDescribeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_SemaphoreDescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _fencelock_v1_SemaphoreDescribeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_SemaphoreDescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _fencelock_v1_SemaphoreDescribeRequest, callback: grpc.requestCallback<_fencelock_v1_SemaphoreDescribeResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Releases the permit the session holds under exactly `token`; the first waiter gets its slot.
   */
  Release(argument: _fencelock_v1_SemaphoreReleaseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_SemaphoreReleaseResponse__Output>): grpc.ClientUnaryCall;
  Release(argument: _fencelock_v1_SemaphoreReleaseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_SemaphoreReleaseResponse__Output>): grpc.ClientUnaryCall;
  Release(argument: _fencelock_v1_SemaphoreReleaseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_SemaphoreReleaseResponse__Output>): grpc.ClientUnaryCall;
  Release(argument: _fencelock_v1_SemaphoreReleaseRequest, callback: grpc.requestCallback<_fencelock_v1_SemaphoreReleaseResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Releases the permit the session holds under exactly `token`; the first waiter gets its slot.
   */
  release(argument: _fencelock_v1_SemaphoreReleaseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_SemaphoreReleaseResponse__Output>): grpc.ClientUnaryCall;
  release(argument: _fencelock_v1_SemaphoreReleaseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_SemaphoreReleaseResponse__Output>): grpc.ClientUnaryCall;
  release(argument: _fencelock_v1_SemaphoreReleaseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_SemaphoreReleaseResponse__Output>): grpc.ClientUnaryCall;
  release(argument: _fencelock_v1_SemaphoreReleaseRequest, callback: grpc.requestCallback<_fencelock_v1_SemaphoreReleaseResponse__Output>): grpc.ClientUnaryCall;
  
}

/**
 * Semaphores (issue 33; docs/architecture.md#semaphores): N permits of one name, each taken in a slot
 * 0..N-1 under a token of its own. A namespace of its own (the semaphore `pool` and the lock `pool` are
 * two resources); permissions as for locks (`lock` on the name). Fencing is per slot: downstream resources
 * keep a watermark per (semaphore, slot) and refuse fence < token.
 */
export interface SemaphoreHandlers extends grpc.UntypedServiceImplementation {
  /**
   * A permit for the session: in the lowest free slot, or the session's own (re-entrant: its slot and
   * token again). All taken: with wait_timeout_ms 0, acquired false; otherwise FIFO wait up to that long
   * (DEADLINE_EXCEEDED when it passes, the waiter removed). FAILED_PRECONDITION PERMITS_MISMATCH (message
   * "permits N", the number in force) while permits are held or waited for under another number.
   */
  Acquire: grpc.handleUnaryCall<_fencelock_v1_SemaphoreAcquireRequest__Output, _fencelock_v1_SemaphoreAcquireResponse>;
  
  /**
   * Read like Lock.Describe (linearizable), behind the `lock` permission on the name.
   */
  Describe: grpc.handleUnaryCall<_fencelock_v1_SemaphoreDescribeRequest__Output, _fencelock_v1_SemaphoreDescribeResponse>;
  
  /**
   * Releases the permit the session holds under exactly `token`; the first waiter gets its slot.
   */
  Release: grpc.handleUnaryCall<_fencelock_v1_SemaphoreReleaseRequest__Output, _fencelock_v1_SemaphoreReleaseResponse>;
  
}

export interface SemaphoreDefinition extends grpc.ServiceDefinition {
  Acquire: MethodDefinition<_fencelock_v1_SemaphoreAcquireRequest, _fencelock_v1_SemaphoreAcquireResponse, _fencelock_v1_SemaphoreAcquireRequest__Output, _fencelock_v1_SemaphoreAcquireResponse__Output>
  Describe: MethodDefinition<_fencelock_v1_SemaphoreDescribeRequest, _fencelock_v1_SemaphoreDescribeResponse, _fencelock_v1_SemaphoreDescribeRequest__Output, _fencelock_v1_SemaphoreDescribeResponse__Output>
  Release: MethodDefinition<_fencelock_v1_SemaphoreReleaseRequest, _fencelock_v1_SemaphoreReleaseResponse, _fencelock_v1_SemaphoreReleaseRequest__Output, _fencelock_v1_SemaphoreReleaseResponse__Output>
}
