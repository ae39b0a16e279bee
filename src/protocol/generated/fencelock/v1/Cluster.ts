// Original file: proto/fencelock/v1/lock.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { MemberAddRequest as _fencelock_v1_MemberAddRequest, MemberAddRequest__Output as _fencelock_v1_MemberAddRequest__Output } from '../../fencelock/v1/MemberAddRequest';
import type { MemberChangeResponse as _fencelock_v1_MemberChangeResponse, MemberChangeResponse__Output as _fencelock_v1_MemberChangeResponse__Output } from '../../fencelock/v1/MemberChangeResponse';
import type { MemberListRequest as _fencelock_v1_MemberListRequest, MemberListRequest__Output as _fencelock_v1_MemberListRequest__Output } from '../../fencelock/v1/MemberListRequest';
import type { MemberListResponse as _fencelock_v1_MemberListResponse, MemberListResponse__Output as _fencelock_v1_MemberListResponse__Output } from '../../fencelock/v1/MemberListResponse';
import type { MemberRequest as _fencelock_v1_MemberRequest, MemberRequest__Output as _fencelock_v1_MemberRequest__Output } from '../../fencelock/v1/MemberRequest';
import type { SnapshotChunk as _fencelock_v1_SnapshotChunk, SnapshotChunk__Output as _fencelock_v1_SnapshotChunk__Output } from '../../fencelock/v1/SnapshotChunk';
import type { SnapshotRequest as _fencelock_v1_SnapshotRequest, SnapshotRequest__Output as _fencelock_v1_SnapshotRequest__Output } from '../../fencelock/v1/SnapshotRequest';
import type { StatusRequest as _fencelock_v1_StatusRequest, StatusRequest__Output as _fencelock_v1_StatusRequest__Output } from '../../fencelock/v1/StatusRequest';
import type { StatusResponse as _fencelock_v1_StatusResponse, StatusResponse__Output as _fencelock_v1_StatusResponse__Output } from '../../fencelock/v1/StatusResponse';

export interface ClusterClient extends grpc.Client {
  /**
   * Adds a learner: it receives the log but does not vote until promoted.
   */
  MemberAdd(argument: _fencelock_v1_MemberAddRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  MemberAdd(argument: _fencelock_v1_MemberAddRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  MemberAdd(argument: _fencelock_v1_MemberAddRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  MemberAdd(argument: _fencelock_v1_MemberAddRequest, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Adds a learner: it receives the log but does not vote until promoted.
   */
  memberAdd(argument: _fencelock_v1_MemberAddRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  memberAdd(argument: _fencelock_v1_MemberAddRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  memberAdd(argument: _fencelock_v1_MemberAddRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  memberAdd(argument: _fencelock_v1_MemberAddRequest, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Membership (docs/operations.md), one change at a time, served by the leader; admin only with auth on.
   * A retried change that is already made succeeds again: add of a learner with the same addresses,
   * promote of a voter, remove of a removed member.
   */
  MemberList(argument: _fencelock_v1_MemberListRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MemberListResponse__Output>): grpc.ClientUnaryCall;
  MemberList(argument: _fencelock_v1_MemberListRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_MemberListResponse__Output>): grpc.ClientUnaryCall;
  MemberList(argument: _fencelock_v1_MemberListRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MemberListResponse__Output>): grpc.ClientUnaryCall;
  MemberList(argument: _fencelock_v1_MemberListRequest, callback: grpc.requestCallback<_fencelock_v1_MemberListResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Membership (docs/operations.md), one change at a time, served by the leader; admin only with auth on.
   * A retried change that is already made succeeds again: add of a learner with the same addresses,
   * promote of a voter, remove of a removed member.
   */
  memberList(argument: _fencelock_v1_MemberListRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MemberListResponse__Output>): grpc.ClientUnaryCall;
  memberList(argument: _fencelock_v1_MemberListRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_MemberListResponse__Output>): grpc.ClientUnaryCall;
  memberList(argument: _fencelock_v1_MemberListRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MemberListResponse__Output>): grpc.ClientUnaryCall;
  memberList(argument: _fencelock_v1_MemberListRequest, callback: grpc.requestCallback<_fencelock_v1_MemberListResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Makes a caught-up learner a voter. FAILED_PRECONDITION (reason LEARNER_BEHIND) while it is behind: until
   * it has answered the leader within an election timeout and holds at least one entry and all but at most
   * 1,000 of the committed ones (docs/membership.md).
   */
  MemberPromote(argument: _fencelock_v1_MemberRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  MemberPromote(argument: _fencelock_v1_MemberRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  MemberPromote(argument: _fencelock_v1_MemberRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  MemberPromote(argument: _fencelock_v1_MemberRequest, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Makes a caught-up learner a voter. FAILED_PRECONDITION (reason LEARNER_BEHIND) while it is behind: until
   * it has answered the leader within an election timeout and holds at least one entry and all but at most
   * 1,000 of the committed ones (docs/membership.md).
   */
  memberPromote(argument: _fencelock_v1_MemberRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  memberPromote(argument: _fencelock_v1_MemberRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  memberPromote(argument: _fencelock_v1_MemberRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  memberPromote(argument: _fencelock_v1_MemberRequest, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Removes a member; removing the leader first hands leadership to another voter.
   */
  MemberRemove(argument: _fencelock_v1_MemberRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  MemberRemove(argument: _fencelock_v1_MemberRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  MemberRemove(argument: _fencelock_v1_MemberRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  MemberRemove(argument: _fencelock_v1_MemberRequest, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Removes a member; removing the leader first hands leadership to another voter.
   */
  memberRemove(argument: _fencelock_v1_MemberRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  memberRemove(argument: _fencelock_v1_MemberRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  memberRemove(argument: _fencelock_v1_MemberRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  memberRemove(argument: _fencelock_v1_MemberRequest, callback: grpc.requestCallback<_fencelock_v1_MemberChangeResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * A consistent backup of the whole state (docs/backup.md), served by the leader: it includes every write
   * acknowledged before the call. The first message carries only the header, the following ones the data,
   * in order. Admin only when auth is on; a follower answers UNAVAILABLE with the leader hint.
   */
  Snapshot(argument: _fencelock_v1_SnapshotRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_fencelock_v1_SnapshotChunk__Output>;
  Snapshot(argument: _fencelock_v1_SnapshotRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_fencelock_v1_SnapshotChunk__Output>;
  /**
   * A consistent backup of the whole state (docs/backup.md), served by the leader: it includes every write
   * acknowledged before the call. The first message carries only the header, the following ones the data,
   * in order. Admin only when auth is on; a follower answers UNAVAILABLE with the leader hint.
   */
  snapshot(argument: _fencelock_v1_SnapshotRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_fencelock_v1_SnapshotChunk__Output>;
  snapshot(argument: _fencelock_v1_SnapshotRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_fencelock_v1_SnapshotChunk__Output>;
  
  Status(argument: _fencelock_v1_StatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  Status(argument: _fencelock_v1_StatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  Status(argument: _fencelock_v1_StatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  Status(argument: _fencelock_v1_StatusRequest, callback: grpc.requestCallback<_fencelock_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  status(argument: _fencelock_v1_StatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  status(argument: _fencelock_v1_StatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  status(argument: _fencelock_v1_StatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  status(argument: _fencelock_v1_StatusRequest, callback: grpc.requestCallback<_fencelock_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface ClusterHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Adds a learner: it receives the log but does not vote until promoted.
   */
  MemberAdd: grpc.handleUnaryCall<_fencelock_v1_MemberAddRequest__Output, _fencelock_v1_MemberChangeResponse>;
  
  /**
   * Membership (docs/operations.md), one change at a time, served by the leader; admin only with auth on.
   * A retried change that is already made succeeds again: add of a learner with the same addresses,
   * promote of a voter, remove of a removed member.
   */
  MemberList: grpc.handleUnaryCall<_fencelock_v1_MemberListRequest__Output, _fencelock_v1_MemberListResponse>;
  
  /**
   * Makes a caught-up learner a voter. FAILED_PRECONDITION (reason LEARNER_BEHIND) while it is behind: until
   * it has answered the leader within an election timeout and holds at least one entry and all but at most
   * 1,000 of the committed ones (docs/membership.md).
   */
  MemberPromote: grpc.handleUnaryCall<_fencelock_v1_MemberRequest__Output, _fencelock_v1_MemberChangeResponse>;
  
  /**
   * Removes a member; removing the leader first hands leadership to another voter.
   */
  MemberRemove: grpc.handleUnaryCall<_fencelock_v1_MemberRequest__Output, _fencelock_v1_MemberChangeResponse>;
  
  /**
   * A consistent backup of the whole state (docs/backup.md), served by the leader: it includes every write
   * acknowledged before the call. The first message carries only the header, the following ones the data,
   * in order. Admin only when auth is on; a follower answers UNAVAILABLE with the leader hint.
   */
  Snapshot: grpc.handleServerStreamingCall<_fencelock_v1_SnapshotRequest__Output, _fencelock_v1_SnapshotChunk>;
  
  Status: grpc.handleUnaryCall<_fencelock_v1_StatusRequest__Output, _fencelock_v1_StatusResponse>;
  
}

export interface ClusterDefinition extends grpc.ServiceDefinition {
  MemberAdd: MethodDefinition<_fencelock_v1_MemberAddRequest, _fencelock_v1_MemberChangeResponse, _fencelock_v1_MemberAddRequest__Output, _fencelock_v1_MemberChangeResponse__Output>
  MemberList: MethodDefinition<_fencelock_v1_MemberListRequest, _fencelock_v1_MemberListResponse, _fencelock_v1_MemberListRequest__Output, _fencelock_v1_MemberListResponse__Output>
  MemberPromote: MethodDefinition<_fencelock_v1_MemberRequest, _fencelock_v1_MemberChangeResponse, _fencelock_v1_MemberRequest__Output, _fencelock_v1_MemberChangeResponse__Output>
  MemberRemove: MethodDefinition<_fencelock_v1_MemberRequest, _fencelock_v1_MemberChangeResponse, _fencelock_v1_MemberRequest__Output, _fencelock_v1_MemberChangeResponse__Output>
  Snapshot: MethodDefinition<_fencelock_v1_SnapshotRequest, _fencelock_v1_SnapshotChunk, _fencelock_v1_SnapshotRequest__Output, _fencelock_v1_SnapshotChunk__Output>
  Status: MethodDefinition<_fencelock_v1_StatusRequest, _fencelock_v1_StatusResponse, _fencelock_v1_StatusRequest__Output, _fencelock_v1_StatusResponse__Output>
}
