import type * as grpc from '@grpc/grpc-js';
import * as path from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import { findProtoRoot } from './protoPath';

/*
 * Wire shapes of the messages in proto/fencelock/v1/lock.proto as @grpc/proto-loader presents them with the
 * options below: camelCase field names, 64-bit integers as decimal strings, enums as their names, bytes as
 * Buffer, every field present (defaults: true). Outgoing messages may carry 64-bit values as decimal strings.
 */

export interface WireRequestHeader {
  clientId: string;
  requestId: string;
  ackedBelow: string;
}

export interface WireOpenSessionRequest {
  header: WireRequestHeader;
  ttlMs: string;
  clientName: string;
}
export interface WireOpenSessionResponse {
  sessionId: string;
  ttlMs: string;
  /** '0' from a server older than the field. */
  electionTimeoutMs?: string;
}
export interface WireKeepAliveRequest {
  sessionId: string;
  /** Unique per renewal on the stream, echoed in the response; '0': not set. */
  renewalId: string;
}
export interface WireKeepAliveResponse {
  sessionId: string;
  alive: boolean;
  remainingMs: string;
  /** The acknowledged request's renewalId; '0' from a server older than the field. */
  renewalId: string;
  /** With alive false: 'REVOKED' when an admin ended the session; '' otherwise (and from older servers). */
  reason?: string;
}
export interface WireCloseSessionRequest {
  header: WireRequestHeader;
  sessionId: string;
}
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- an empty message, as generated
export type WireCloseSessionResponse = {};

export interface WireAcquireRequest {
  header: WireRequestHeader;
  lock: string;
  sessionId: string;
  waitTimeoutMs: string;
}
export interface WireAcquireResponse {
  acquired: boolean;
  token: string;
  holderSession: string;
}
export interface WireReleaseRequest {
  header: WireRequestHeader;
  lock: string;
  sessionId: string;
  token: string;
}
export interface WireReleaseResponse {
  nextHolderSession: string;
  nextToken: string;
}
export interface WireDescribeRequest {
  lock: string;
}
export interface WireDescribeResponse {
  held: boolean;
  holderSession: string;
  token: string;
  grantedAtMs: string;
  waiters: string[];
  latestToken: string;
}
export interface WireWatchRequest {
  lock: string;
}
export type WireLockEventKind = 'KIND_UNSPECIFIED' | 'GRANTED' | 'RELEASED' | 'EXPIRED';
export interface WireLockEvent {
  kind: WireLockEventKind;
  lock: string;
  sessionId: string;
  token: string;
  index: string;
}

export type WireOpType = 'TYPE_UNSPECIFIED' | 'PUT' | 'DELETE';
export interface WireOp {
  type: WireOpType;
  key: string;
  value: Uint8Array;
}
export interface WireWriteRequest {
  header: WireRequestHeader;
  lock: string;
  token: string;
  sessionId: string;
  ops: WireOp[];
}
export interface WireWriteResponse {
  index: string;
}
export interface WireGetRequest {
  key: string;
  staleOk: boolean;
}
export interface WireGetResponse {
  found: boolean;
  value: Buffer;
  token: string;
  lock: string;
  deleted: boolean;
}
export interface WireListRequest {
  prefix: string;
  startAfter: string;
  limit: number;
  includeDeleted: boolean;
}
export interface WireKeyValue {
  key: string;
  value: Buffer;
  token: string;
  lock: string;
  deleted: boolean;
}
export interface WireListResponse {
  items: WireKeyValue[];
  more: boolean;
}

/** KV.Move: `what` names the oneof member set (proto-loader `oneofs: true`, on messages it decodes). */
export interface WireMoveRequest {
  header: WireRequestHeader;
  key?: string;
  prefix?: string;
  toLock: string;
  what?: 'key' | 'prefix';
}
export interface WireMoveResponse {
  moved: string;
  index: string;
}

export type WireStatusRequest = Record<string, never>;
export type WireSnapshotRequest = Record<string, never>;
export interface WireSnapshotHeader {
  index: string;
  term: string;
  size: string;
  sha256: Buffer;
  voters: string[];
}
/** Cluster.Snapshot: the header in the first message (null in the others), then the data. */
export interface WireSnapshotChunk {
  header: WireSnapshotHeader | null;
  data: Buffer;
}
export interface WirePeerStatus {
  id: string;
  address: string;
  match: string;
  next: string;
  state: string;
}
export interface WireStatusResponse {
  id: string;
  role: string;
  term: string;
  leader: string;
  leaderAddress: string;
  commit: string;
  applied: string;
  snapshotIndex: string;
  lastIndex: string;
  peers: WirePeerStatus[];
  address: string;
  sessions: string;
  locksHeld: string;
  waiters: string;
}

// ----- Membership (docs/operations.md) -----

export interface WireMember {
  id: string;
  clientAddress: string;
  peerAddress: string;
  learner: boolean;
  match: string;
}
export interface WireMemberListResponse {
  members: WireMember[];
  clusterId: string;
  commit: string;
  removed: string[];
}
export interface WireMemberAddRequest {
  id: string;
  clientAddress: string;
  peerAddress: string;
}
export interface WireMemberRequest {
  id: string;
}
export interface WireMemberChangeResponse {
  index: string;
  /** A message field: null when the server left it out. */
  members: WireMemberListResponse | null;
}

// ----- Auth (docs/auth.md) -----

export type WirePermission = 'PERMISSION_UNSPECIFIED' | 'LOCK' | 'WRITE' | 'READ' | 'ADMIN';
export interface WirePermissionRule {
  permission: WirePermission;
  prefix: string;
}
export interface WireQuota {
  name: string;
  value: string;
}
export type WireWhoAmIRequest = Record<string, never>;
export interface WireWhoAmIResponse {
  identity: string;
  via: string;
  authEnabled: boolean;
  roles: string[];
  rules: WirePermissionRule[];
}
export type WireAuthListRequest = Record<string, never>;
export interface WireUserInfo {
  name: string;
  roles: string[];
}
export interface WireRoleInfo {
  name: string;
  rules: WirePermissionRule[];
  quotas: WireQuota[];
}
export interface WireTokenInfo {
  id: string;
  user: string;
}
export interface WireAuthListResponse {
  authEnabled: boolean;
  users: WireUserInfo[];
  roles: WireRoleInfo[];
  tokens: WireTokenInfo[];
}
export interface WireUserRequest {
  header: WireRequestHeader;
  user: string;
}
export interface WireUserRoleRequest {
  header: WireRequestHeader;
  user: string;
  role: string;
}
export interface WireRoleRequest {
  header: WireRequestHeader;
  role: string;
}
export interface WirePermissionRequest {
  header: WireRequestHeader;
  role: string;
  rule: WirePermissionRule;
}
export interface WireQuotaRequest {
  header: WireRequestHeader;
  role: string;
  name: string;
  value: string;
  unset: boolean;
}
export interface WireTokenIssueRequest {
  header: WireRequestHeader;
  user: string;
}
export interface WireTokenIssueResponse {
  tokenId: string;
  token: string;
}
export interface WireTokenRevokeRequest {
  header: WireRequestHeader;
  tokenId: string;
}
export interface WireAuthChangeResponse {
  index: string;
}
export interface WireListSessionsRequest {
  startAfter: string;
  limit: number;
}
export interface WireSessionSummary {
  handle: string;
  identity: string;
  clientName: string;
  locks?: string[];
  waiting?: string[];
  ageMs: string;
  ttlMs: string;
}
export interface WireListSessionsResponse {
  sessions?: WireSessionSummary[];
  more: boolean;
}
export interface WireRevokeSessionRequest {
  header: WireRequestHeader;
  handle: string;
}
export interface WireRevokeSessionResponse {
  released?: string[];
}

/** The calls that travel on the Pipeline stream: the oneof field names of CallRequest and CallResponse. */
export type PipelineCall = 'acquire' | 'release' | 'write' | 'get';

/** One answer on the Pipeline stream: a status, and on OK the result under the call's name. */
export interface WireCallResponse {
  callId: string;
  code: number;
  message: string;
  metadata: Record<string, string>;
  [result: string]: unknown;
}

/** Options for @grpc/proto-loader; the server side may use the same so both agree on shapes. */
export const PROTO_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** Fully qualified service names of the public API. */
export const SERVICE_NAMES = {
  session: 'fencelock.v1.Session',
  lock: 'fencelock.v1.Lock',
  kv: 'fencelock.v1.KV',
  cluster: 'fencelock.v1.Cluster',
  pipeline: 'fencelock.v1.Pipeline',
  auth: 'fencelock.v1.Auth',
} as const;

let cached: protoLoader.PackageDefinition | undefined;

/** Loads (once) the package definition of proto/fencelock/v1/lock.proto. */
export function loadLockPackage(): protoLoader.PackageDefinition {
  if (!cached) {
    const root = findProtoRoot();
    cached = protoLoader.loadSync('fencelock/v1/lock.proto', { ...PROTO_LOADER_OPTIONS, includeDirs: [path.join(root, 'proto')] });
  }
  return cached;
}

/** The grpc-js service definition of one of the public services. */
export function serviceDefinition(name: (typeof SERVICE_NAMES)[keyof typeof SERVICE_NAMES]): grpc.ServiceDefinition {
  const def = loadLockPackage()[name];
  if (!def || 'format' in def) throw new Error(`service ${name} is missing from lock.proto`);
  return def as unknown as grpc.ServiceDefinition;
}

/** What is needed to call one method on a generic grpc-js Client. */
export interface MethodDesc<Req, Res> {
  path: string;
  serialize: (req: Req) => Buffer;
  deserialize: (buf: Buffer) => Res;
  /** Set when the call may also travel on the Pipeline stream, under this name. */
  pipeline?: PipelineCall;
}

function method<Req, Res>(service: (typeof SERVICE_NAMES)[keyof typeof SERVICE_NAMES], name: string, pipeline?: PipelineCall): MethodDesc<Req, Res> {
  const def = serviceDefinition(service)[name];
  if (!def) throw new Error(`method ${service}/${name} is missing from lock.proto`);
  return {
    path: def.path,
    serialize: def.requestSerialize as (req: Req) => Buffer,
    deserialize: def.responseDeserialize as (buf: Buffer) => Res,
    pipeline,
  };
}

export interface Methods {
  open: MethodDesc<WireOpenSessionRequest, WireOpenSessionResponse>;
  keepAlive: MethodDesc<WireKeepAliveRequest, WireKeepAliveResponse>;
  closeSession: MethodDesc<WireCloseSessionRequest, WireCloseSessionResponse>;
  acquire: MethodDesc<WireAcquireRequest, WireAcquireResponse>;
  release: MethodDesc<WireReleaseRequest, WireReleaseResponse>;
  describe: MethodDesc<WireDescribeRequest, WireDescribeResponse>;
  watch: MethodDesc<WireWatchRequest, WireLockEvent>;
  write: MethodDesc<WireWriteRequest, WireWriteResponse>;
  get: MethodDesc<WireGetRequest, WireGetResponse>;
  list: MethodDesc<WireListRequest, WireListResponse>;
  move: MethodDesc<WireMoveRequest, WireMoveResponse>;
  status: MethodDesc<WireStatusRequest, WireStatusResponse>;
  snapshot: MethodDesc<WireSnapshotRequest, WireSnapshotChunk>;
  pipelineCalls: MethodDesc<unknown, WireCallResponse>;
  auth: AuthMethods;
  members: MemberMethods;
}

export interface MemberMethods {
  MemberList: MethodDesc<Record<string, never>, WireMemberListResponse>;
  MemberAdd: MethodDesc<WireMemberAddRequest, WireMemberChangeResponse>;
  MemberPromote: MethodDesc<WireMemberRequest, WireMemberChangeResponse>;
  MemberRemove: MethodDesc<WireMemberRequest, WireMemberChangeResponse>;
}

/** The Auth service's methods, by the proto's method names. */
export interface AuthMethods {
  WhoAmI: MethodDesc<WireWhoAmIRequest, WireWhoAmIResponse>;
  List: MethodDesc<WireAuthListRequest, WireAuthListResponse>;
  UserAdd: MethodDesc<WireUserRequest, WireAuthChangeResponse>;
  UserDelete: MethodDesc<WireUserRequest, WireAuthChangeResponse>;
  UserGrantRole: MethodDesc<WireUserRoleRequest, WireAuthChangeResponse>;
  UserRevokeRole: MethodDesc<WireUserRoleRequest, WireAuthChangeResponse>;
  RoleAdd: MethodDesc<WireRoleRequest, WireAuthChangeResponse>;
  RoleDelete: MethodDesc<WireRoleRequest, WireAuthChangeResponse>;
  RoleGrantPermission: MethodDesc<WirePermissionRequest, WireAuthChangeResponse>;
  RoleRevokePermission: MethodDesc<WirePermissionRequest, WireAuthChangeResponse>;
  RoleSetQuota: MethodDesc<WireQuotaRequest, WireAuthChangeResponse>;
  TokenIssue: MethodDesc<WireTokenIssueRequest, WireTokenIssueResponse>;
  TokenRevoke: MethodDesc<WireTokenRevokeRequest, WireAuthChangeResponse>;
  /** Session.List and Session.Revoke: admin calls, so they live with the Auth methods in the client. */
  SessionList: MethodDesc<WireListSessionsRequest, WireListSessionsResponse>;
  SessionRevoke: MethodDesc<WireRevokeSessionRequest, WireRevokeSessionResponse>;
}

let cachedMethods: Methods | undefined;

/** Method descriptors of every call the client makes. */
export function methods(): Methods {
  if (!cachedMethods) {
    cachedMethods = {
      open: method(SERVICE_NAMES.session, 'Open'),
      keepAlive: method(SERVICE_NAMES.session, 'KeepAlive'),
      closeSession: method(SERVICE_NAMES.session, 'Close'),
      acquire: method(SERVICE_NAMES.lock, 'Acquire', 'acquire'),
      release: method(SERVICE_NAMES.lock, 'Release', 'release'),
      describe: method(SERVICE_NAMES.lock, 'Describe'),
      watch: method(SERVICE_NAMES.lock, 'Watch'),
      write: method(SERVICE_NAMES.kv, 'Write', 'write'),
      get: method(SERVICE_NAMES.kv, 'Get', 'get'),
      list: method(SERVICE_NAMES.kv, 'List'),
      move: method(SERVICE_NAMES.kv, 'Move'),
      status: method(SERVICE_NAMES.cluster, 'Status'),
      snapshot: method(SERVICE_NAMES.cluster, 'Snapshot'),
      pipelineCalls: method(SERVICE_NAMES.pipeline, 'Calls'),
      members: {
        MemberList: method(SERVICE_NAMES.cluster, 'MemberList'),
        MemberAdd: method(SERVICE_NAMES.cluster, 'MemberAdd'),
        MemberPromote: method(SERVICE_NAMES.cluster, 'MemberPromote'),
        MemberRemove: method(SERVICE_NAMES.cluster, 'MemberRemove'),
      },
      auth: {
        WhoAmI: method(SERVICE_NAMES.auth, 'WhoAmI'),
        List: method(SERVICE_NAMES.auth, 'List'),
        UserAdd: method(SERVICE_NAMES.auth, 'UserAdd'),
        UserDelete: method(SERVICE_NAMES.auth, 'UserDelete'),
        UserGrantRole: method(SERVICE_NAMES.auth, 'UserGrantRole'),
        UserRevokeRole: method(SERVICE_NAMES.auth, 'UserRevokeRole'),
        RoleAdd: method(SERVICE_NAMES.auth, 'RoleAdd'),
        RoleDelete: method(SERVICE_NAMES.auth, 'RoleDelete'),
        RoleGrantPermission: method(SERVICE_NAMES.auth, 'RoleGrantPermission'),
        RoleRevokePermission: method(SERVICE_NAMES.auth, 'RoleRevokePermission'),
        RoleSetQuota: method(SERVICE_NAMES.auth, 'RoleSetQuota'),
        TokenIssue: method(SERVICE_NAMES.auth, 'TokenIssue'),
        TokenRevoke: method(SERVICE_NAMES.auth, 'TokenRevoke'),
        SessionList: method(SERVICE_NAMES.session, 'List'),
        SessionRevoke: method(SERVICE_NAMES.session, 'Revoke'),
      },
    };
  }
  return cachedMethods;
}
