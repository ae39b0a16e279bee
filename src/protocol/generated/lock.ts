import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { AcquireAllRequest as _fencelock_v1_AcquireAllRequest, AcquireAllRequest__Output as _fencelock_v1_AcquireAllRequest__Output } from './fencelock/v1/AcquireAllRequest';
import type { AcquireAllResponse as _fencelock_v1_AcquireAllResponse, AcquireAllResponse__Output as _fencelock_v1_AcquireAllResponse__Output } from './fencelock/v1/AcquireAllResponse';
import type { AcquireRequest as _fencelock_v1_AcquireRequest, AcquireRequest__Output as _fencelock_v1_AcquireRequest__Output } from './fencelock/v1/AcquireRequest';
import type { AcquireResponse as _fencelock_v1_AcquireResponse, AcquireResponse__Output as _fencelock_v1_AcquireResponse__Output } from './fencelock/v1/AcquireResponse';
import type { AuthClient as _fencelock_v1_AuthClient, AuthDefinition as _fencelock_v1_AuthDefinition } from './fencelock/v1/Auth';
import type { AuthChangeResponse as _fencelock_v1_AuthChangeResponse, AuthChangeResponse__Output as _fencelock_v1_AuthChangeResponse__Output } from './fencelock/v1/AuthChangeResponse';
import type { AuthListRequest as _fencelock_v1_AuthListRequest, AuthListRequest__Output as _fencelock_v1_AuthListRequest__Output } from './fencelock/v1/AuthListRequest';
import type { AuthListResponse as _fencelock_v1_AuthListResponse, AuthListResponse__Output as _fencelock_v1_AuthListResponse__Output } from './fencelock/v1/AuthListResponse';
import type { CallRequest as _fencelock_v1_CallRequest, CallRequest__Output as _fencelock_v1_CallRequest__Output } from './fencelock/v1/CallRequest';
import type { CallResponse as _fencelock_v1_CallResponse, CallResponse__Output as _fencelock_v1_CallResponse__Output } from './fencelock/v1/CallResponse';
import type { CloseSessionRequest as _fencelock_v1_CloseSessionRequest, CloseSessionRequest__Output as _fencelock_v1_CloseSessionRequest__Output } from './fencelock/v1/CloseSessionRequest';
import type { CloseSessionResponse as _fencelock_v1_CloseSessionResponse, CloseSessionResponse__Output as _fencelock_v1_CloseSessionResponse__Output } from './fencelock/v1/CloseSessionResponse';
import type { ClusterClient as _fencelock_v1_ClusterClient, ClusterDefinition as _fencelock_v1_ClusterDefinition } from './fencelock/v1/Cluster';
import type { DescribeRequest as _fencelock_v1_DescribeRequest, DescribeRequest__Output as _fencelock_v1_DescribeRequest__Output } from './fencelock/v1/DescribeRequest';
import type { DescribeResponse as _fencelock_v1_DescribeResponse, DescribeResponse__Output as _fencelock_v1_DescribeResponse__Output } from './fencelock/v1/DescribeResponse';
import type { GetRequest as _fencelock_v1_GetRequest, GetRequest__Output as _fencelock_v1_GetRequest__Output } from './fencelock/v1/GetRequest';
import type { GetResponse as _fencelock_v1_GetResponse, GetResponse__Output as _fencelock_v1_GetResponse__Output } from './fencelock/v1/GetResponse';
import type { HeldGrant as _fencelock_v1_HeldGrant, HeldGrant__Output as _fencelock_v1_HeldGrant__Output } from './fencelock/v1/HeldGrant';
import type { KVClient as _fencelock_v1_KVClient, KVDefinition as _fencelock_v1_KVDefinition } from './fencelock/v1/KV';
import type { KeepAliveRequest as _fencelock_v1_KeepAliveRequest, KeepAliveRequest__Output as _fencelock_v1_KeepAliveRequest__Output } from './fencelock/v1/KeepAliveRequest';
import type { KeepAliveResponse as _fencelock_v1_KeepAliveResponse, KeepAliveResponse__Output as _fencelock_v1_KeepAliveResponse__Output } from './fencelock/v1/KeepAliveResponse';
import type { KeyValue as _fencelock_v1_KeyValue, KeyValue__Output as _fencelock_v1_KeyValue__Output } from './fencelock/v1/KeyValue';
import type { ListLocksRequest as _fencelock_v1_ListLocksRequest, ListLocksRequest__Output as _fencelock_v1_ListLocksRequest__Output } from './fencelock/v1/ListLocksRequest';
import type { ListLocksResponse as _fencelock_v1_ListLocksResponse, ListLocksResponse__Output as _fencelock_v1_ListLocksResponse__Output } from './fencelock/v1/ListLocksResponse';
import type { ListRequest as _fencelock_v1_ListRequest, ListRequest__Output as _fencelock_v1_ListRequest__Output } from './fencelock/v1/ListRequest';
import type { ListResponse as _fencelock_v1_ListResponse, ListResponse__Output as _fencelock_v1_ListResponse__Output } from './fencelock/v1/ListResponse';
import type { ListSessionsRequest as _fencelock_v1_ListSessionsRequest, ListSessionsRequest__Output as _fencelock_v1_ListSessionsRequest__Output } from './fencelock/v1/ListSessionsRequest';
import type { ListSessionsResponse as _fencelock_v1_ListSessionsResponse, ListSessionsResponse__Output as _fencelock_v1_ListSessionsResponse__Output } from './fencelock/v1/ListSessionsResponse';
import type { LockClient as _fencelock_v1_LockClient, LockDefinition as _fencelock_v1_LockDefinition } from './fencelock/v1/Lock';
import type { LockEvent as _fencelock_v1_LockEvent, LockEvent__Output as _fencelock_v1_LockEvent__Output } from './fencelock/v1/LockEvent';
import type { LockGrant as _fencelock_v1_LockGrant, LockGrant__Output as _fencelock_v1_LockGrant__Output } from './fencelock/v1/LockGrant';
import type { LockSummary as _fencelock_v1_LockSummary, LockSummary__Output as _fencelock_v1_LockSummary__Output } from './fencelock/v1/LockSummary';
import type { LockWaiter as _fencelock_v1_LockWaiter, LockWaiter__Output as _fencelock_v1_LockWaiter__Output } from './fencelock/v1/LockWaiter';
import type { Member as _fencelock_v1_Member, Member__Output as _fencelock_v1_Member__Output } from './fencelock/v1/Member';
import type { MemberAddRequest as _fencelock_v1_MemberAddRequest, MemberAddRequest__Output as _fencelock_v1_MemberAddRequest__Output } from './fencelock/v1/MemberAddRequest';
import type { MemberChangeResponse as _fencelock_v1_MemberChangeResponse, MemberChangeResponse__Output as _fencelock_v1_MemberChangeResponse__Output } from './fencelock/v1/MemberChangeResponse';
import type { MemberListRequest as _fencelock_v1_MemberListRequest, MemberListRequest__Output as _fencelock_v1_MemberListRequest__Output } from './fencelock/v1/MemberListRequest';
import type { MemberListResponse as _fencelock_v1_MemberListResponse, MemberListResponse__Output as _fencelock_v1_MemberListResponse__Output } from './fencelock/v1/MemberListResponse';
import type { MemberRequest as _fencelock_v1_MemberRequest, MemberRequest__Output as _fencelock_v1_MemberRequest__Output } from './fencelock/v1/MemberRequest';
import type { MoveRequest as _fencelock_v1_MoveRequest, MoveRequest__Output as _fencelock_v1_MoveRequest__Output } from './fencelock/v1/MoveRequest';
import type { MoveResponse as _fencelock_v1_MoveResponse, MoveResponse__Output as _fencelock_v1_MoveResponse__Output } from './fencelock/v1/MoveResponse';
import type { Op as _fencelock_v1_Op, Op__Output as _fencelock_v1_Op__Output } from './fencelock/v1/Op';
import type { OpenSessionRequest as _fencelock_v1_OpenSessionRequest, OpenSessionRequest__Output as _fencelock_v1_OpenSessionRequest__Output } from './fencelock/v1/OpenSessionRequest';
import type { OpenSessionResponse as _fencelock_v1_OpenSessionResponse, OpenSessionResponse__Output as _fencelock_v1_OpenSessionResponse__Output } from './fencelock/v1/OpenSessionResponse';
import type { PeerStatus as _fencelock_v1_PeerStatus, PeerStatus__Output as _fencelock_v1_PeerStatus__Output } from './fencelock/v1/PeerStatus';
import type { PermissionRequest as _fencelock_v1_PermissionRequest, PermissionRequest__Output as _fencelock_v1_PermissionRequest__Output } from './fencelock/v1/PermissionRequest';
import type { PermissionRule as _fencelock_v1_PermissionRule, PermissionRule__Output as _fencelock_v1_PermissionRule__Output } from './fencelock/v1/PermissionRule';
import type { PermitHolder as _fencelock_v1_PermitHolder, PermitHolder__Output as _fencelock_v1_PermitHolder__Output } from './fencelock/v1/PermitHolder';
import type { PipelineClient as _fencelock_v1_PipelineClient, PipelineDefinition as _fencelock_v1_PipelineDefinition } from './fencelock/v1/Pipeline';
import type { Quota as _fencelock_v1_Quota, Quota__Output as _fencelock_v1_Quota__Output } from './fencelock/v1/Quota';
import type { QuotaRequest as _fencelock_v1_QuotaRequest, QuotaRequest__Output as _fencelock_v1_QuotaRequest__Output } from './fencelock/v1/QuotaRequest';
import type { ReleaseRequest as _fencelock_v1_ReleaseRequest, ReleaseRequest__Output as _fencelock_v1_ReleaseRequest__Output } from './fencelock/v1/ReleaseRequest';
import type { ReleaseResponse as _fencelock_v1_ReleaseResponse, ReleaseResponse__Output as _fencelock_v1_ReleaseResponse__Output } from './fencelock/v1/ReleaseResponse';
import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from './fencelock/v1/RequestHeader';
import type { RevokeLockRequest as _fencelock_v1_RevokeLockRequest, RevokeLockRequest__Output as _fencelock_v1_RevokeLockRequest__Output } from './fencelock/v1/RevokeLockRequest';
import type { RevokeLockResponse as _fencelock_v1_RevokeLockResponse, RevokeLockResponse__Output as _fencelock_v1_RevokeLockResponse__Output } from './fencelock/v1/RevokeLockResponse';
import type { RevokeSessionRequest as _fencelock_v1_RevokeSessionRequest, RevokeSessionRequest__Output as _fencelock_v1_RevokeSessionRequest__Output } from './fencelock/v1/RevokeSessionRequest';
import type { RevokeSessionResponse as _fencelock_v1_RevokeSessionResponse, RevokeSessionResponse__Output as _fencelock_v1_RevokeSessionResponse__Output } from './fencelock/v1/RevokeSessionResponse';
import type { RoleInfo as _fencelock_v1_RoleInfo, RoleInfo__Output as _fencelock_v1_RoleInfo__Output } from './fencelock/v1/RoleInfo';
import type { RoleRequest as _fencelock_v1_RoleRequest, RoleRequest__Output as _fencelock_v1_RoleRequest__Output } from './fencelock/v1/RoleRequest';
import type { SemaphoreClient as _fencelock_v1_SemaphoreClient, SemaphoreDefinition as _fencelock_v1_SemaphoreDefinition } from './fencelock/v1/Semaphore';
import type { SemaphoreAcquireRequest as _fencelock_v1_SemaphoreAcquireRequest, SemaphoreAcquireRequest__Output as _fencelock_v1_SemaphoreAcquireRequest__Output } from './fencelock/v1/SemaphoreAcquireRequest';
import type { SemaphoreAcquireResponse as _fencelock_v1_SemaphoreAcquireResponse, SemaphoreAcquireResponse__Output as _fencelock_v1_SemaphoreAcquireResponse__Output } from './fencelock/v1/SemaphoreAcquireResponse';
import type { SemaphoreDescribeRequest as _fencelock_v1_SemaphoreDescribeRequest, SemaphoreDescribeRequest__Output as _fencelock_v1_SemaphoreDescribeRequest__Output } from './fencelock/v1/SemaphoreDescribeRequest';
import type { SemaphoreDescribeResponse as _fencelock_v1_SemaphoreDescribeResponse, SemaphoreDescribeResponse__Output as _fencelock_v1_SemaphoreDescribeResponse__Output } from './fencelock/v1/SemaphoreDescribeResponse';
import type { SemaphoreReleaseRequest as _fencelock_v1_SemaphoreReleaseRequest, SemaphoreReleaseRequest__Output as _fencelock_v1_SemaphoreReleaseRequest__Output } from './fencelock/v1/SemaphoreReleaseRequest';
import type { SemaphoreReleaseResponse as _fencelock_v1_SemaphoreReleaseResponse, SemaphoreReleaseResponse__Output as _fencelock_v1_SemaphoreReleaseResponse__Output } from './fencelock/v1/SemaphoreReleaseResponse';
import type { SessionClient as _fencelock_v1_SessionClient, SessionDefinition as _fencelock_v1_SessionDefinition } from './fencelock/v1/Session';
import type { SessionInfo as _fencelock_v1_SessionInfo, SessionInfo__Output as _fencelock_v1_SessionInfo__Output } from './fencelock/v1/SessionInfo';
import type { SessionSummary as _fencelock_v1_SessionSummary, SessionSummary__Output as _fencelock_v1_SessionSummary__Output } from './fencelock/v1/SessionSummary';
import type { SharedHolder as _fencelock_v1_SharedHolder, SharedHolder__Output as _fencelock_v1_SharedHolder__Output } from './fencelock/v1/SharedHolder';
import type { SnapshotChunk as _fencelock_v1_SnapshotChunk, SnapshotChunk__Output as _fencelock_v1_SnapshotChunk__Output } from './fencelock/v1/SnapshotChunk';
import type { SnapshotHeader as _fencelock_v1_SnapshotHeader, SnapshotHeader__Output as _fencelock_v1_SnapshotHeader__Output } from './fencelock/v1/SnapshotHeader';
import type { SnapshotRequest as _fencelock_v1_SnapshotRequest, SnapshotRequest__Output as _fencelock_v1_SnapshotRequest__Output } from './fencelock/v1/SnapshotRequest';
import type { StatusRequest as _fencelock_v1_StatusRequest, StatusRequest__Output as _fencelock_v1_StatusRequest__Output } from './fencelock/v1/StatusRequest';
import type { StatusResponse as _fencelock_v1_StatusResponse, StatusResponse__Output as _fencelock_v1_StatusResponse__Output } from './fencelock/v1/StatusResponse';
import type { TokenInfo as _fencelock_v1_TokenInfo, TokenInfo__Output as _fencelock_v1_TokenInfo__Output } from './fencelock/v1/TokenInfo';
import type { TokenIssueRequest as _fencelock_v1_TokenIssueRequest, TokenIssueRequest__Output as _fencelock_v1_TokenIssueRequest__Output } from './fencelock/v1/TokenIssueRequest';
import type { TokenIssueResponse as _fencelock_v1_TokenIssueResponse, TokenIssueResponse__Output as _fencelock_v1_TokenIssueResponse__Output } from './fencelock/v1/TokenIssueResponse';
import type { TokenRevokeRequest as _fencelock_v1_TokenRevokeRequest, TokenRevokeRequest__Output as _fencelock_v1_TokenRevokeRequest__Output } from './fencelock/v1/TokenRevokeRequest';
import type { UserInfo as _fencelock_v1_UserInfo, UserInfo__Output as _fencelock_v1_UserInfo__Output } from './fencelock/v1/UserInfo';
import type { UserRequest as _fencelock_v1_UserRequest, UserRequest__Output as _fencelock_v1_UserRequest__Output } from './fencelock/v1/UserRequest';
import type { UserRoleRequest as _fencelock_v1_UserRoleRequest, UserRoleRequest__Output as _fencelock_v1_UserRoleRequest__Output } from './fencelock/v1/UserRoleRequest';
import type { WatchRequest as _fencelock_v1_WatchRequest, WatchRequest__Output as _fencelock_v1_WatchRequest__Output } from './fencelock/v1/WatchRequest';
import type { WhoAmIRequest as _fencelock_v1_WhoAmIRequest, WhoAmIRequest__Output as _fencelock_v1_WhoAmIRequest__Output } from './fencelock/v1/WhoAmIRequest';
import type { WhoAmIResponse as _fencelock_v1_WhoAmIResponse, WhoAmIResponse__Output as _fencelock_v1_WhoAmIResponse__Output } from './fencelock/v1/WhoAmIResponse';
import type { WriteRequest as _fencelock_v1_WriteRequest, WriteRequest__Output as _fencelock_v1_WriteRequest__Output } from './fencelock/v1/WriteRequest';
import type { WriteResponse as _fencelock_v1_WriteResponse, WriteResponse__Output as _fencelock_v1_WriteResponse__Output } from './fencelock/v1/WriteResponse';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  fencelock: {
    v1: {
      AcquireAllRequest: MessageTypeDefinition<_fencelock_v1_AcquireAllRequest, _fencelock_v1_AcquireAllRequest__Output>
      AcquireAllResponse: MessageTypeDefinition<_fencelock_v1_AcquireAllResponse, _fencelock_v1_AcquireAllResponse__Output>
      AcquireRequest: MessageTypeDefinition<_fencelock_v1_AcquireRequest, _fencelock_v1_AcquireRequest__Output>
      AcquireResponse: MessageTypeDefinition<_fencelock_v1_AcquireResponse, _fencelock_v1_AcquireResponse__Output>
      /**
       * Who may do what (docs/auth.md). An identity is the name in a client certificate's URI SAN
       * urn:fencelock:client:NAME (else its subject CN), or the user of a bearer token sent as `authorization:
       * Bearer flt_<id>_<secret>` metadata. With auth on, a call without an identity fails UNAUTHENTICATED and
       * a call the identity's roles do not allow fails PERMISSION_DENIED (reason PERMISSION_DENIED, or
       * NOT_SESSION_OWNER for a session another identity opened). Every change is a log entry and needs the
       * `admin` permission; WhoAmI and List are reads.
       */
      Auth: SubtypeConstructor<typeof grpc.Client, _fencelock_v1_AuthClient> & { service: _fencelock_v1_AuthDefinition }
      AuthChangeResponse: MessageTypeDefinition<_fencelock_v1_AuthChangeResponse, _fencelock_v1_AuthChangeResponse__Output>
      AuthListRequest: MessageTypeDefinition<_fencelock_v1_AuthListRequest, _fencelock_v1_AuthListRequest__Output>
      AuthListResponse: MessageTypeDefinition<_fencelock_v1_AuthListResponse, _fencelock_v1_AuthListResponse__Output>
      CallRequest: MessageTypeDefinition<_fencelock_v1_CallRequest, _fencelock_v1_CallRequest__Output>
      CallResponse: MessageTypeDefinition<_fencelock_v1_CallResponse, _fencelock_v1_CallResponse__Output>
      CloseSessionRequest: MessageTypeDefinition<_fencelock_v1_CloseSessionRequest, _fencelock_v1_CloseSessionRequest__Output>
      CloseSessionResponse: MessageTypeDefinition<_fencelock_v1_CloseSessionResponse, _fencelock_v1_CloseSessionResponse__Output>
      Cluster: SubtypeConstructor<typeof grpc.Client, _fencelock_v1_ClusterClient> & { service: _fencelock_v1_ClusterDefinition }
      DescribeRequest: MessageTypeDefinition<_fencelock_v1_DescribeRequest, _fencelock_v1_DescribeRequest__Output>
      DescribeResponse: MessageTypeDefinition<_fencelock_v1_DescribeResponse, _fencelock_v1_DescribeResponse__Output>
      GetRequest: MessageTypeDefinition<_fencelock_v1_GetRequest, _fencelock_v1_GetRequest__Output>
      GetResponse: MessageTypeDefinition<_fencelock_v1_GetResponse, _fencelock_v1_GetResponse__Output>
      HeldGrant: MessageTypeDefinition<_fencelock_v1_HeldGrant, _fencelock_v1_HeldGrant__Output>
      KV: SubtypeConstructor<typeof grpc.Client, _fencelock_v1_KVClient> & { service: _fencelock_v1_KVDefinition }
      KeepAliveRequest: MessageTypeDefinition<_fencelock_v1_KeepAliveRequest, _fencelock_v1_KeepAliveRequest__Output>
      KeepAliveResponse: MessageTypeDefinition<_fencelock_v1_KeepAliveResponse, _fencelock_v1_KeepAliveResponse__Output>
      KeyValue: MessageTypeDefinition<_fencelock_v1_KeyValue, _fencelock_v1_KeyValue__Output>
      ListLocksRequest: MessageTypeDefinition<_fencelock_v1_ListLocksRequest, _fencelock_v1_ListLocksRequest__Output>
      ListLocksResponse: MessageTypeDefinition<_fencelock_v1_ListLocksResponse, _fencelock_v1_ListLocksResponse__Output>
      ListRequest: MessageTypeDefinition<_fencelock_v1_ListRequest, _fencelock_v1_ListRequest__Output>
      ListResponse: MessageTypeDefinition<_fencelock_v1_ListResponse, _fencelock_v1_ListResponse__Output>
      ListSessionsRequest: MessageTypeDefinition<_fencelock_v1_ListSessionsRequest, _fencelock_v1_ListSessionsRequest__Output>
      ListSessionsResponse: MessageTypeDefinition<_fencelock_v1_ListSessionsResponse, _fencelock_v1_ListSessionsResponse__Output>
      Lock: SubtypeConstructor<typeof grpc.Client, _fencelock_v1_LockClient> & { service: _fencelock_v1_LockDefinition }
      LockEvent: MessageTypeDefinition<_fencelock_v1_LockEvent, _fencelock_v1_LockEvent__Output>
      LockGrant: MessageTypeDefinition<_fencelock_v1_LockGrant, _fencelock_v1_LockGrant__Output>
      LockMode: EnumTypeDefinition
      LockSummary: MessageTypeDefinition<_fencelock_v1_LockSummary, _fencelock_v1_LockSummary__Output>
      LockWaiter: MessageTypeDefinition<_fencelock_v1_LockWaiter, _fencelock_v1_LockWaiter__Output>
      Member: MessageTypeDefinition<_fencelock_v1_Member, _fencelock_v1_Member__Output>
      MemberAddRequest: MessageTypeDefinition<_fencelock_v1_MemberAddRequest, _fencelock_v1_MemberAddRequest__Output>
      MemberChangeResponse: MessageTypeDefinition<_fencelock_v1_MemberChangeResponse, _fencelock_v1_MemberChangeResponse__Output>
      MemberListRequest: MessageTypeDefinition<_fencelock_v1_MemberListRequest, _fencelock_v1_MemberListRequest__Output>
      MemberListResponse: MessageTypeDefinition<_fencelock_v1_MemberListResponse, _fencelock_v1_MemberListResponse__Output>
      MemberRequest: MessageTypeDefinition<_fencelock_v1_MemberRequest, _fencelock_v1_MemberRequest__Output>
      MoveRequest: MessageTypeDefinition<_fencelock_v1_MoveRequest, _fencelock_v1_MoveRequest__Output>
      MoveResponse: MessageTypeDefinition<_fencelock_v1_MoveResponse, _fencelock_v1_MoveResponse__Output>
      Op: MessageTypeDefinition<_fencelock_v1_Op, _fencelock_v1_Op__Output>
      OpenSessionRequest: MessageTypeDefinition<_fencelock_v1_OpenSessionRequest, _fencelock_v1_OpenSessionRequest__Output>
      OpenSessionResponse: MessageTypeDefinition<_fencelock_v1_OpenSessionResponse, _fencelock_v1_OpenSessionResponse__Output>
      PeerStatus: MessageTypeDefinition<_fencelock_v1_PeerStatus, _fencelock_v1_PeerStatus__Output>
      Permission: EnumTypeDefinition
      PermissionRequest: MessageTypeDefinition<_fencelock_v1_PermissionRequest, _fencelock_v1_PermissionRequest__Output>
      PermissionRule: MessageTypeDefinition<_fencelock_v1_PermissionRule, _fencelock_v1_PermissionRule__Output>
      PermitHolder: MessageTypeDefinition<_fencelock_v1_PermitHolder, _fencelock_v1_PermitHolder__Output>
      /**
       * The hot calls (Acquire, Release, Write, Get, and a semaphore's Acquire and Release) multiplexed on one long-lived stream per client and node.
       * A unary call costs an HTTP/2 stream of its own (headers, trailers, its own bookkeeping on both ends),
       * which is most of the cost of a small call; on this stream a call is one message each way. Each request
       * gets exactly one response with its call_id, in any order; semantics, limits and errors are those of
       * the unary call (same request ids, same retries, same status codes and metadata).
       * 
       * Coalesced calls: a node that takes them says so in the stream's response headers
       * (`fencelock-pipeline-batch: N`, the most calls it takes in one message). A client that has seen that
       * header may send the calls it issued in one turn as one CallRequest carrying only `calls`; a client that
       * has not (an older node never sends it) sends one call per message. Each call of a batch is handled as if
       * it came alone (its own call_id, deadline, checks, limits and dedup), and each gets its own CallResponse;
       * answers ready at the same time travel as one CallResponse carrying only `answers`. An older client never
       * sets `calls` and reads every answer as before.
       */
      Pipeline: SubtypeConstructor<typeof grpc.Client, _fencelock_v1_PipelineClient> & { service: _fencelock_v1_PipelineDefinition }
      Quota: MessageTypeDefinition<_fencelock_v1_Quota, _fencelock_v1_Quota__Output>
      QuotaRequest: MessageTypeDefinition<_fencelock_v1_QuotaRequest, _fencelock_v1_QuotaRequest__Output>
      ReleaseRequest: MessageTypeDefinition<_fencelock_v1_ReleaseRequest, _fencelock_v1_ReleaseRequest__Output>
      ReleaseResponse: MessageTypeDefinition<_fencelock_v1_ReleaseResponse, _fencelock_v1_ReleaseResponse__Output>
      RequestHeader: MessageTypeDefinition<_fencelock_v1_RequestHeader, _fencelock_v1_RequestHeader__Output>
      RevokeLockRequest: MessageTypeDefinition<_fencelock_v1_RevokeLockRequest, _fencelock_v1_RevokeLockRequest__Output>
      RevokeLockResponse: MessageTypeDefinition<_fencelock_v1_RevokeLockResponse, _fencelock_v1_RevokeLockResponse__Output>
      RevokeSessionRequest: MessageTypeDefinition<_fencelock_v1_RevokeSessionRequest, _fencelock_v1_RevokeSessionRequest__Output>
      RevokeSessionResponse: MessageTypeDefinition<_fencelock_v1_RevokeSessionResponse, _fencelock_v1_RevokeSessionResponse__Output>
      RoleInfo: MessageTypeDefinition<_fencelock_v1_RoleInfo, _fencelock_v1_RoleInfo__Output>
      RoleRequest: MessageTypeDefinition<_fencelock_v1_RoleRequest, _fencelock_v1_RoleRequest__Output>
      /**
       * Semaphores (issue 33; docs/architecture.md#semaphores): N permits of one name, each taken in a slot
       * 0..N-1 under a token of its own. A namespace of its own (the semaphore `pool` and the lock `pool` are
       * two resources); permissions as for locks (`lock` on the name). Fencing is per slot: downstream resources
       * keep a watermark per (semaphore, slot) and refuse fence < token.
       */
      Semaphore: SubtypeConstructor<typeof grpc.Client, _fencelock_v1_SemaphoreClient> & { service: _fencelock_v1_SemaphoreDefinition }
      SemaphoreAcquireRequest: MessageTypeDefinition<_fencelock_v1_SemaphoreAcquireRequest, _fencelock_v1_SemaphoreAcquireRequest__Output>
      SemaphoreAcquireResponse: MessageTypeDefinition<_fencelock_v1_SemaphoreAcquireResponse, _fencelock_v1_SemaphoreAcquireResponse__Output>
      SemaphoreDescribeRequest: MessageTypeDefinition<_fencelock_v1_SemaphoreDescribeRequest, _fencelock_v1_SemaphoreDescribeRequest__Output>
      SemaphoreDescribeResponse: MessageTypeDefinition<_fencelock_v1_SemaphoreDescribeResponse, _fencelock_v1_SemaphoreDescribeResponse__Output>
      SemaphoreReleaseRequest: MessageTypeDefinition<_fencelock_v1_SemaphoreReleaseRequest, _fencelock_v1_SemaphoreReleaseRequest__Output>
      SemaphoreReleaseResponse: MessageTypeDefinition<_fencelock_v1_SemaphoreReleaseResponse, _fencelock_v1_SemaphoreReleaseResponse__Output>
      Session: SubtypeConstructor<typeof grpc.Client, _fencelock_v1_SessionClient> & { service: _fencelock_v1_SessionDefinition }
      SessionInfo: MessageTypeDefinition<_fencelock_v1_SessionInfo, _fencelock_v1_SessionInfo__Output>
      SessionSummary: MessageTypeDefinition<_fencelock_v1_SessionSummary, _fencelock_v1_SessionSummary__Output>
      SharedHolder: MessageTypeDefinition<_fencelock_v1_SharedHolder, _fencelock_v1_SharedHolder__Output>
      SnapshotChunk: MessageTypeDefinition<_fencelock_v1_SnapshotChunk, _fencelock_v1_SnapshotChunk__Output>
      SnapshotHeader: MessageTypeDefinition<_fencelock_v1_SnapshotHeader, _fencelock_v1_SnapshotHeader__Output>
      SnapshotRequest: MessageTypeDefinition<_fencelock_v1_SnapshotRequest, _fencelock_v1_SnapshotRequest__Output>
      StatusRequest: MessageTypeDefinition<_fencelock_v1_StatusRequest, _fencelock_v1_StatusRequest__Output>
      StatusResponse: MessageTypeDefinition<_fencelock_v1_StatusResponse, _fencelock_v1_StatusResponse__Output>
      TokenInfo: MessageTypeDefinition<_fencelock_v1_TokenInfo, _fencelock_v1_TokenInfo__Output>
      TokenIssueRequest: MessageTypeDefinition<_fencelock_v1_TokenIssueRequest, _fencelock_v1_TokenIssueRequest__Output>
      TokenIssueResponse: MessageTypeDefinition<_fencelock_v1_TokenIssueResponse, _fencelock_v1_TokenIssueResponse__Output>
      TokenRevokeRequest: MessageTypeDefinition<_fencelock_v1_TokenRevokeRequest, _fencelock_v1_TokenRevokeRequest__Output>
      UserInfo: MessageTypeDefinition<_fencelock_v1_UserInfo, _fencelock_v1_UserInfo__Output>
      UserRequest: MessageTypeDefinition<_fencelock_v1_UserRequest, _fencelock_v1_UserRequest__Output>
      UserRoleRequest: MessageTypeDefinition<_fencelock_v1_UserRoleRequest, _fencelock_v1_UserRoleRequest__Output>
      WatchRequest: MessageTypeDefinition<_fencelock_v1_WatchRequest, _fencelock_v1_WatchRequest__Output>
      WhoAmIRequest: MessageTypeDefinition<_fencelock_v1_WhoAmIRequest, _fencelock_v1_WhoAmIRequest__Output>
      WhoAmIResponse: MessageTypeDefinition<_fencelock_v1_WhoAmIResponse, _fencelock_v1_WhoAmIResponse__Output>
      WriteRequest: MessageTypeDefinition<_fencelock_v1_WriteRequest, _fencelock_v1_WriteRequest__Output>
      WriteResponse: MessageTypeDefinition<_fencelock_v1_WriteResponse, _fencelock_v1_WriteResponse__Output>
    }
  }
}

