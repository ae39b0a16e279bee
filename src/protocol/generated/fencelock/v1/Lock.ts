// Original file: proto/fencelock/v1/lock.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AcquireAllRequest as _fencelock_v1_AcquireAllRequest, AcquireAllRequest__Output as _fencelock_v1_AcquireAllRequest__Output } from '../../fencelock/v1/AcquireAllRequest';
import type { AcquireAllResponse as _fencelock_v1_AcquireAllResponse, AcquireAllResponse__Output as _fencelock_v1_AcquireAllResponse__Output } from '../../fencelock/v1/AcquireAllResponse';
import type { AcquireRequest as _fencelock_v1_AcquireRequest, AcquireRequest__Output as _fencelock_v1_AcquireRequest__Output } from '../../fencelock/v1/AcquireRequest';
import type { AcquireResponse as _fencelock_v1_AcquireResponse, AcquireResponse__Output as _fencelock_v1_AcquireResponse__Output } from '../../fencelock/v1/AcquireResponse';
import type { DescribeRequest as _fencelock_v1_DescribeRequest, DescribeRequest__Output as _fencelock_v1_DescribeRequest__Output } from '../../fencelock/v1/DescribeRequest';
import type { DescribeResponse as _fencelock_v1_DescribeResponse, DescribeResponse__Output as _fencelock_v1_DescribeResponse__Output } from '../../fencelock/v1/DescribeResponse';
import type { ListLocksRequest as _fencelock_v1_ListLocksRequest, ListLocksRequest__Output as _fencelock_v1_ListLocksRequest__Output } from '../../fencelock/v1/ListLocksRequest';
import type { ListLocksResponse as _fencelock_v1_ListLocksResponse, ListLocksResponse__Output as _fencelock_v1_ListLocksResponse__Output } from '../../fencelock/v1/ListLocksResponse';
import type { LockEvent as _fencelock_v1_LockEvent, LockEvent__Output as _fencelock_v1_LockEvent__Output } from '../../fencelock/v1/LockEvent';
import type { ReleaseRequest as _fencelock_v1_ReleaseRequest, ReleaseRequest__Output as _fencelock_v1_ReleaseRequest__Output } from '../../fencelock/v1/ReleaseRequest';
import type { ReleaseResponse as _fencelock_v1_ReleaseResponse, ReleaseResponse__Output as _fencelock_v1_ReleaseResponse__Output } from '../../fencelock/v1/ReleaseResponse';
import type { RevokeLockRequest as _fencelock_v1_RevokeLockRequest, RevokeLockRequest__Output as _fencelock_v1_RevokeLockRequest__Output } from '../../fencelock/v1/RevokeLockRequest';
import type { RevokeLockResponse as _fencelock_v1_RevokeLockResponse, RevokeLockResponse__Output as _fencelock_v1_RevokeLockResponse__Output } from '../../fencelock/v1/RevokeLockResponse';
import type { WatchRequest as _fencelock_v1_WatchRequest, WatchRequest__Output as _fencelock_v1_WatchRequest__Output } from '../../fencelock/v1/WatchRequest';

export interface LockClient extends grpc.Client {
  Acquire(argument: _fencelock_v1_AcquireRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  Acquire(argument: _fencelock_v1_AcquireRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  Acquire(argument: _fencelock_v1_AcquireRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  Acquire(argument: _fencelock_v1_AcquireRequest, callback: grpc.requestCallback<_fencelock_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  acquire(argument: _fencelock_v1_AcquireRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  acquire(argument: _fencelock_v1_AcquireRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  acquire(argument: _fencelock_v1_AcquireRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  acquire(argument: _fencelock_v1_AcquireRequest, callback: grpc.requestCallback<_fencelock_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Atomic multi-lock (issue 33; docs/architecture.md#atomic-multi-lock): exclusive grants of every named lock
   * in one log entry, one token for all, or one waiter queued in every lock's queue and granted the whole set
   * at once. Never a partial set. Each lock is then released on its own (Release, with the token).
   */
  AcquireAll(argument: _fencelock_v1_AcquireAllRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AcquireAllResponse__Output>): grpc.ClientUnaryCall;
  AcquireAll(argument: _fencelock_v1_AcquireAllRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AcquireAllResponse__Output>): grpc.ClientUnaryCall;
  AcquireAll(argument: _fencelock_v1_AcquireAllRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AcquireAllResponse__Output>): grpc.ClientUnaryCall;
  AcquireAll(argument: _fencelock_v1_AcquireAllRequest, callback: grpc.requestCallback<_fencelock_v1_AcquireAllResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Atomic multi-lock (issue 33; docs/architecture.md#atomic-multi-lock): exclusive grants of every named lock
   * in one log entry, one token for all, or one waiter queued in every lock's queue and granted the whole set
   * at once. Never a partial set. Each lock is then released on its own (Release, with the token).
   */
  acquireAll(argument: _fencelock_v1_AcquireAllRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AcquireAllResponse__Output>): grpc.ClientUnaryCall;
  acquireAll(argument: _fencelock_v1_AcquireAllRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AcquireAllResponse__Output>): grpc.ClientUnaryCall;
  acquireAll(argument: _fencelock_v1_AcquireAllRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AcquireAllResponse__Output>): grpc.ClientUnaryCall;
  acquireAll(argument: _fencelock_v1_AcquireAllRequest, callback: grpc.requestCallback<_fencelock_v1_AcquireAllResponse__Output>): grpc.ClientUnaryCall;
  
  Describe(argument: _fencelock_v1_DescribeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _fencelock_v1_DescribeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _fencelock_v1_DescribeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _fencelock_v1_DescribeRequest, callback: grpc.requestCallback<_fencelock_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _fencelock_v1_DescribeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _fencelock_v1_DescribeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _fencelock_v1_DescribeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _fencelock_v1_DescribeRequest, callback: grpc.requestCallback<_fencelock_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * The locks whose names start with a prefix, in name order, a page at a time; read like Describe
   * (linearizable) and filtered by the caller's permissions: a lock the caller may not describe is left out
   * as if it did not exist.
   */
  List(argument: _fencelock_v1_ListLocksRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_ListLocksResponse__Output>): grpc.ClientUnaryCall;
  List(argument: _fencelock_v1_ListLocksRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_ListLocksResponse__Output>): grpc.ClientUnaryCall;
  List(argument: _fencelock_v1_ListLocksRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_ListLocksResponse__Output>): grpc.ClientUnaryCall;
  List(argument: _fencelock_v1_ListLocksRequest, callback: grpc.requestCallback<_fencelock_v1_ListLocksResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The locks whose names start with a prefix, in name order, a page at a time; read like Describe
   * (linearizable) and filtered by the caller's permissions: a lock the caller may not describe is left out
   * as if it did not exist.
   */
  list(argument: _fencelock_v1_ListLocksRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_ListLocksResponse__Output>): grpc.ClientUnaryCall;
  list(argument: _fencelock_v1_ListLocksRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_ListLocksResponse__Output>): grpc.ClientUnaryCall;
  list(argument: _fencelock_v1_ListLocksRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_ListLocksResponse__Output>): grpc.ClientUnaryCall;
  list(argument: _fencelock_v1_ListLocksRequest, callback: grpc.requestCallback<_fencelock_v1_ListLocksResponse__Output>): grpc.ClientUnaryCall;
  
  Release(argument: _fencelock_v1_ReleaseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  Release(argument: _fencelock_v1_ReleaseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  Release(argument: _fencelock_v1_ReleaseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  Release(argument: _fencelock_v1_ReleaseRequest, callback: grpc.requestCallback<_fencelock_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  release(argument: _fencelock_v1_ReleaseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  release(argument: _fencelock_v1_ReleaseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  release(argument: _fencelock_v1_ReleaseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  release(argument: _fencelock_v1_ReleaseRequest, callback: grpc.requestCallback<_fencelock_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Admin only (docs/auth.md "Ending sessions"): ends the lock's current grant without ending its holder's
   * session. The next waiter is granted with the Revoke entry's index as token, as on a release, so the old
   * holder's writes are refused; its client learns REVOKED from its next renewal. FAILED_PRECONDITION with
   * reason LOCK_NOT_HELD when nobody holds the lock, WRONG_TOKEN when `token` is set and not the current grant's.
   */
  Revoke(argument: _fencelock_v1_RevokeLockRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_RevokeLockResponse__Output>): grpc.ClientUnaryCall;
  Revoke(argument: _fencelock_v1_RevokeLockRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_RevokeLockResponse__Output>): grpc.ClientUnaryCall;
  Revoke(argument: _fencelock_v1_RevokeLockRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_RevokeLockResponse__Output>): grpc.ClientUnaryCall;
  Revoke(argument: _fencelock_v1_RevokeLockRequest, callback: grpc.requestCallback<_fencelock_v1_RevokeLockResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Admin only (docs/auth.md "Ending sessions"): ends the lock's current grant without ending its holder's
   * session. The next waiter is granted with the Revoke entry's index as token, as on a release, so the old
   * holder's writes are refused; its client learns REVOKED from its next renewal. FAILED_PRECONDITION with
   * reason LOCK_NOT_HELD when nobody holds the lock, WRONG_TOKEN when `token` is set and not the current grant's.
   */
  revoke(argument: _fencelock_v1_RevokeLockRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_RevokeLockResponse__Output>): grpc.ClientUnaryCall;
  revoke(argument: _fencelock_v1_RevokeLockRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_RevokeLockResponse__Output>): grpc.ClientUnaryCall;
  revoke(argument: _fencelock_v1_RevokeLockRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_RevokeLockResponse__Output>): grpc.ClientUnaryCall;
  revoke(argument: _fencelock_v1_RevokeLockRequest, callback: grpc.requestCallback<_fencelock_v1_RevokeLockResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Served by any node from the entries it applies. A node that installs a snapshot from the leader cannot
   * send the events of the entries the snapshot covers: it ends the stream with ABORTED, reason EVENTS_MISSED,
   * naming the log index up to which; call Describe for the lock's current state, then Watch again.
   */
  Watch(argument: _fencelock_v1_WatchRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_fencelock_v1_LockEvent__Output>;
  Watch(argument: _fencelock_v1_WatchRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_fencelock_v1_LockEvent__Output>;
  /**
   * Served by any node from the entries it applies. A node that installs a snapshot from the leader cannot
   * send the events of the entries the snapshot covers: it ends the stream with ABORTED, reason EVENTS_MISSED,
   * naming the log index up to which; call Describe for the lock's current state, then Watch again.
   */
  watch(argument: _fencelock_v1_WatchRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_fencelock_v1_LockEvent__Output>;
  watch(argument: _fencelock_v1_WatchRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_fencelock_v1_LockEvent__Output>;
  
}

export interface LockHandlers extends grpc.UntypedServiceImplementation {
  Acquire: grpc.handleUnaryCall<_fencelock_v1_AcquireRequest__Output, _fencelock_v1_AcquireResponse>;
  
  /**
   * Atomic multi-lock (issue 33; docs/architecture.md#atomic-multi-lock): exclusive grants of every named lock
   * in one log entry, one token for all, or one waiter queued in every lock's queue and granted the whole set
   * at once. Never a partial set. Each lock is then released on its own (Release, with the token).
   */
  AcquireAll: grpc.handleUnaryCall<_fencelock_v1_AcquireAllRequest__Output, _fencelock_v1_AcquireAllResponse>;
  
  Describe: grpc.handleUnaryCall<_fencelock_v1_DescribeRequest__Output, _fencelock_v1_DescribeResponse>;
  
  /**
   * The locks whose names start with a prefix, in name order, a page at a time; read like Describe
   * (linearizable) and filtered by the caller's permissions: a lock the caller may not describe is left out
   * as if it did not exist.
   */
  List: grpc.handleUnaryCall<_fencelock_v1_ListLocksRequest__Output, _fencelock_v1_ListLocksResponse>;
  
  Release: grpc.handleUnaryCall<_fencelock_v1_ReleaseRequest__Output, _fencelock_v1_ReleaseResponse>;
  
  /**
   * Admin only (docs/auth.md "Ending sessions"): ends the lock's current grant without ending its holder's
   * session. The next waiter is granted with the Revoke entry's index as token, as on a release, so the old
   * holder's writes are refused; its client learns REVOKED from its next renewal. FAILED_PRECONDITION with
   * reason LOCK_NOT_HELD when nobody holds the lock, WRONG_TOKEN when `token` is set and not the current grant's.
   */
  Revoke: grpc.handleUnaryCall<_fencelock_v1_RevokeLockRequest__Output, _fencelock_v1_RevokeLockResponse>;
  
  /**
   * Served by any node from the entries it applies. A node that installs a snapshot from the leader cannot
   * send the events of the entries the snapshot covers: it ends the stream with ABORTED, reason EVENTS_MISSED,
   * naming the log index up to which; call Describe for the lock's current state, then Watch again.
   */
  Watch: grpc.handleServerStreamingCall<_fencelock_v1_WatchRequest__Output, _fencelock_v1_LockEvent>;
  
}

export interface LockDefinition extends grpc.ServiceDefinition {
  Acquire: MethodDefinition<_fencelock_v1_AcquireRequest, _fencelock_v1_AcquireResponse, _fencelock_v1_AcquireRequest__Output, _fencelock_v1_AcquireResponse__Output>
  AcquireAll: MethodDefinition<_fencelock_v1_AcquireAllRequest, _fencelock_v1_AcquireAllResponse, _fencelock_v1_AcquireAllRequest__Output, _fencelock_v1_AcquireAllResponse__Output>
  Describe: MethodDefinition<_fencelock_v1_DescribeRequest, _fencelock_v1_DescribeResponse, _fencelock_v1_DescribeRequest__Output, _fencelock_v1_DescribeResponse__Output>
  List: MethodDefinition<_fencelock_v1_ListLocksRequest, _fencelock_v1_ListLocksResponse, _fencelock_v1_ListLocksRequest__Output, _fencelock_v1_ListLocksResponse__Output>
  Release: MethodDefinition<_fencelock_v1_ReleaseRequest, _fencelock_v1_ReleaseResponse, _fencelock_v1_ReleaseRequest__Output, _fencelock_v1_ReleaseResponse__Output>
  Revoke: MethodDefinition<_fencelock_v1_RevokeLockRequest, _fencelock_v1_RevokeLockResponse, _fencelock_v1_RevokeLockRequest__Output, _fencelock_v1_RevokeLockResponse__Output>
  Watch: MethodDefinition<_fencelock_v1_WatchRequest, _fencelock_v1_LockEvent, _fencelock_v1_WatchRequest__Output, _fencelock_v1_LockEvent__Output>
}
