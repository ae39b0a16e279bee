// Compile-time proof that the client's hand-written wire shapes (./proto.ts) agree with the types generated
// from lock.proto (src/protocol/generated, `npm run gen:proto`): what the client sends fits the message, and
// what the decoder yields fits what the client reads. A change to the .proto that breaks either is a tsc
// error on the line of that message. Types only: nothing of this file exists at run time.
import type * as P from './proto';
import type { RequestHeader as GRequestHeader } from '../protocol/generated/fencelock/v1/RequestHeader';
import type { OpenSessionRequest as GOpenSessionRequest } from '../protocol/generated/fencelock/v1/OpenSessionRequest';
import type { OpenSessionResponse__Output as GOpenSessionResponse } from '../protocol/generated/fencelock/v1/OpenSessionResponse';
import type { KeepAliveRequest as GKeepAliveRequest } from '../protocol/generated/fencelock/v1/KeepAliveRequest';
import type { KeepAliveResponse__Output as GKeepAliveResponse } from '../protocol/generated/fencelock/v1/KeepAliveResponse';
import type { CloseSessionRequest as GCloseSessionRequest } from '../protocol/generated/fencelock/v1/CloseSessionRequest';
import type { CloseSessionResponse__Output as GCloseSessionResponse } from '../protocol/generated/fencelock/v1/CloseSessionResponse';
import type { AcquireRequest as GAcquireRequest } from '../protocol/generated/fencelock/v1/AcquireRequest';
import type { AcquireResponse__Output as GAcquireResponse } from '../protocol/generated/fencelock/v1/AcquireResponse';
import type { ReleaseRequest as GReleaseRequest } from '../protocol/generated/fencelock/v1/ReleaseRequest';
import type { ReleaseResponse__Output as GReleaseResponse } from '../protocol/generated/fencelock/v1/ReleaseResponse';
import type { DescribeRequest as GDescribeRequest } from '../protocol/generated/fencelock/v1/DescribeRequest';
import type { DescribeResponse__Output as GDescribeResponse } from '../protocol/generated/fencelock/v1/DescribeResponse';
import type { WatchRequest as GWatchRequest } from '../protocol/generated/fencelock/v1/WatchRequest';
import type { LockEvent__Output as GLockEvent } from '../protocol/generated/fencelock/v1/LockEvent';
import type { Op__Output as GOp } from '../protocol/generated/fencelock/v1/Op';
import type { WriteRequest as GWriteRequest } from '../protocol/generated/fencelock/v1/WriteRequest';
import type { WriteResponse__Output as GWriteResponse } from '../protocol/generated/fencelock/v1/WriteResponse';
import type { GetRequest as GGetRequest } from '../protocol/generated/fencelock/v1/GetRequest';
import type { GetResponse__Output as GGetResponse } from '../protocol/generated/fencelock/v1/GetResponse';
import type { ListRequest as GListRequest } from '../protocol/generated/fencelock/v1/ListRequest';
import type { KeyValue__Output as GKeyValue } from '../protocol/generated/fencelock/v1/KeyValue';
import type { ListResponse__Output as GListResponse } from '../protocol/generated/fencelock/v1/ListResponse';
import type { MoveRequest as GMoveRequest } from '../protocol/generated/fencelock/v1/MoveRequest';
import type { MoveResponse__Output as GMoveResponse } from '../protocol/generated/fencelock/v1/MoveResponse';
import type { StatusRequest as GStatusRequest } from '../protocol/generated/fencelock/v1/StatusRequest';
import type { SnapshotRequest as GSnapshotRequest } from '../protocol/generated/fencelock/v1/SnapshotRequest';
import type { SnapshotHeader__Output as GSnapshotHeader } from '../protocol/generated/fencelock/v1/SnapshotHeader';
import type { SnapshotChunk__Output as GSnapshotChunk } from '../protocol/generated/fencelock/v1/SnapshotChunk';
import type { PeerStatus__Output as GPeerStatus } from '../protocol/generated/fencelock/v1/PeerStatus';
import type { StatusResponse__Output as GStatusResponse } from '../protocol/generated/fencelock/v1/StatusResponse';
import type { Member__Output as GMember } from '../protocol/generated/fencelock/v1/Member';
import type { MemberListResponse__Output as GMemberListResponse } from '../protocol/generated/fencelock/v1/MemberListResponse';
import type { MemberAddRequest as GMemberAddRequest } from '../protocol/generated/fencelock/v1/MemberAddRequest';
import type { MemberRequest as GMemberRequest } from '../protocol/generated/fencelock/v1/MemberRequest';
import type { MemberChangeResponse__Output as GMemberChangeResponse } from '../protocol/generated/fencelock/v1/MemberChangeResponse';
import type { PermissionRule__Output as GPermissionRule } from '../protocol/generated/fencelock/v1/PermissionRule';
import type { Quota__Output as GQuota } from '../protocol/generated/fencelock/v1/Quota';
import type { WhoAmIRequest as GWhoAmIRequest } from '../protocol/generated/fencelock/v1/WhoAmIRequest';
import type { WhoAmIResponse__Output as GWhoAmIResponse } from '../protocol/generated/fencelock/v1/WhoAmIResponse';
import type { AuthListRequest as GAuthListRequest } from '../protocol/generated/fencelock/v1/AuthListRequest';
import type { UserInfo__Output as GUserInfo } from '../protocol/generated/fencelock/v1/UserInfo';
import type { RoleInfo__Output as GRoleInfo } from '../protocol/generated/fencelock/v1/RoleInfo';
import type { TokenInfo__Output as GTokenInfo } from '../protocol/generated/fencelock/v1/TokenInfo';
import type { AuthListResponse__Output as GAuthListResponse } from '../protocol/generated/fencelock/v1/AuthListResponse';
import type { UserRequest as GUserRequest } from '../protocol/generated/fencelock/v1/UserRequest';
import type { UserRoleRequest as GUserRoleRequest } from '../protocol/generated/fencelock/v1/UserRoleRequest';
import type { RoleRequest as GRoleRequest } from '../protocol/generated/fencelock/v1/RoleRequest';
import type { PermissionRequest as GPermissionRequest } from '../protocol/generated/fencelock/v1/PermissionRequest';
import type { QuotaRequest as GQuotaRequest } from '../protocol/generated/fencelock/v1/QuotaRequest';
import type { TokenIssueRequest as GTokenIssueRequest } from '../protocol/generated/fencelock/v1/TokenIssueRequest';
import type { TokenIssueResponse__Output as GTokenIssueResponse } from '../protocol/generated/fencelock/v1/TokenIssueResponse';
import type { TokenRevokeRequest as GTokenRevokeRequest } from '../protocol/generated/fencelock/v1/TokenRevokeRequest';
import type { AuthChangeResponse__Output as GAuthChangeResponse } from '../protocol/generated/fencelock/v1/AuthChangeResponse';

/** true when From is assignable to To, otherwise a type that names both. */
type Fits<From, To> = [From] extends [To] ? true : { error: 'wire shape does not fit'; from: From; to: To };
/** Only true satisfies the constraint. */
type Holds<T extends true> = T;

/**
 * One entry per message: for a request, the client's shape fits the message (the client never decodes one);
 * for a response or a part of one, what the decoder yields fits the client's shape.
 */
export interface WireConformance {
  RequestHeader: Holds<Fits<P.WireRequestHeader, GRequestHeader>>;
  OpenSessionRequest: Holds<Fits<P.WireOpenSessionRequest, GOpenSessionRequest>>;
  OpenSessionResponse: Holds<Fits<GOpenSessionResponse, P.WireOpenSessionResponse>>;
  KeepAliveRequest: Holds<Fits<P.WireKeepAliveRequest, GKeepAliveRequest>>;
  KeepAliveResponse: Holds<Fits<GKeepAliveResponse, P.WireKeepAliveResponse>>;
  CloseSessionRequest: Holds<Fits<P.WireCloseSessionRequest, GCloseSessionRequest>>;
  CloseSessionResponse: Holds<Fits<GCloseSessionResponse, P.WireCloseSessionResponse>>;
  AcquireRequest: Holds<Fits<P.WireAcquireRequest, GAcquireRequest>>;
  AcquireResponse: Holds<Fits<GAcquireResponse, P.WireAcquireResponse>>;
  ReleaseRequest: Holds<Fits<P.WireReleaseRequest, GReleaseRequest>>;
  ReleaseResponse: Holds<Fits<GReleaseResponse, P.WireReleaseResponse>>;
  DescribeRequest: Holds<Fits<P.WireDescribeRequest, GDescribeRequest>>;
  DescribeResponse: Holds<Fits<GDescribeResponse, P.WireDescribeResponse>>;
  WatchRequest: Holds<Fits<P.WireWatchRequest, GWatchRequest>>;
  LockEvent: Holds<Fits<GLockEvent, P.WireLockEvent>>;
  Op: Holds<Fits<GOp, P.WireOp>>;
  WriteRequest: Holds<Fits<P.WireWriteRequest, GWriteRequest>>;
  WriteResponse: Holds<Fits<GWriteResponse, P.WireWriteResponse>>;
  GetRequest: Holds<Fits<P.WireGetRequest, GGetRequest>>;
  GetResponse: Holds<Fits<GGetResponse, P.WireGetResponse>>;
  ListRequest: Holds<Fits<P.WireListRequest, GListRequest>>;
  KeyValue: Holds<Fits<GKeyValue, P.WireKeyValue>>;
  ListResponse: Holds<Fits<GListResponse, P.WireListResponse>>;
  MoveRequest: Holds<Fits<P.WireMoveRequest, GMoveRequest>>;
  MoveResponse: Holds<Fits<GMoveResponse, P.WireMoveResponse>>;
  StatusRequest: Holds<Fits<P.WireStatusRequest, GStatusRequest>>;
  SnapshotRequest: Holds<Fits<P.WireSnapshotRequest, GSnapshotRequest>>;
  SnapshotHeader: Holds<Fits<GSnapshotHeader, P.WireSnapshotHeader>>;
  SnapshotChunk: Holds<Fits<GSnapshotChunk, P.WireSnapshotChunk>>;
  PeerStatus: Holds<Fits<GPeerStatus, P.WirePeerStatus>>;
  StatusResponse: Holds<Fits<GStatusResponse, P.WireStatusResponse>>;
  Member: Holds<Fits<GMember, P.WireMember>>;
  MemberListResponse: Holds<Fits<GMemberListResponse, P.WireMemberListResponse>>;
  MemberAddRequest: Holds<Fits<P.WireMemberAddRequest, GMemberAddRequest>>;
  MemberRequest: Holds<Fits<P.WireMemberRequest, GMemberRequest>>;
  MemberChangeResponse: Holds<Fits<GMemberChangeResponse, P.WireMemberChangeResponse>>;
  PermissionRule: Holds<Fits<GPermissionRule, P.WirePermissionRule>>;
  Quota: Holds<Fits<GQuota, P.WireQuota>>;
  WhoAmIRequest: Holds<Fits<P.WireWhoAmIRequest, GWhoAmIRequest>>;
  WhoAmIResponse: Holds<Fits<GWhoAmIResponse, P.WireWhoAmIResponse>>;
  AuthListRequest: Holds<Fits<P.WireAuthListRequest, GAuthListRequest>>;
  UserInfo: Holds<Fits<GUserInfo, P.WireUserInfo>>;
  RoleInfo: Holds<Fits<GRoleInfo, P.WireRoleInfo>>;
  TokenInfo: Holds<Fits<GTokenInfo, P.WireTokenInfo>>;
  AuthListResponse: Holds<Fits<GAuthListResponse, P.WireAuthListResponse>>;
  UserRequest: Holds<Fits<P.WireUserRequest, GUserRequest>>;
  UserRoleRequest: Holds<Fits<P.WireUserRoleRequest, GUserRoleRequest>>;
  RoleRequest: Holds<Fits<P.WireRoleRequest, GRoleRequest>>;
  PermissionRequest: Holds<Fits<P.WirePermissionRequest, GPermissionRequest>>;
  QuotaRequest: Holds<Fits<P.WireQuotaRequest, GQuotaRequest>>;
  TokenIssueRequest: Holds<Fits<P.WireTokenIssueRequest, GTokenIssueRequest>>;
  TokenIssueResponse: Holds<Fits<GTokenIssueResponse, P.WireTokenIssueResponse>>;
  TokenRevokeRequest: Holds<Fits<P.WireTokenRevokeRequest, GTokenRevokeRequest>>;
  AuthChangeResponse: Holds<Fits<GAuthChangeResponse, P.WireAuthChangeResponse>>;
}
