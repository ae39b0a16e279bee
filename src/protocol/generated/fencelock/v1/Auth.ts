// Original file: proto/fencelock/v1/lock.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AuthChangeResponse as _fencelock_v1_AuthChangeResponse, AuthChangeResponse__Output as _fencelock_v1_AuthChangeResponse__Output } from '../../fencelock/v1/AuthChangeResponse';
import type { AuthListRequest as _fencelock_v1_AuthListRequest, AuthListRequest__Output as _fencelock_v1_AuthListRequest__Output } from '../../fencelock/v1/AuthListRequest';
import type { AuthListResponse as _fencelock_v1_AuthListResponse, AuthListResponse__Output as _fencelock_v1_AuthListResponse__Output } from '../../fencelock/v1/AuthListResponse';
import type { PermissionRequest as _fencelock_v1_PermissionRequest, PermissionRequest__Output as _fencelock_v1_PermissionRequest__Output } from '../../fencelock/v1/PermissionRequest';
import type { QuotaRequest as _fencelock_v1_QuotaRequest, QuotaRequest__Output as _fencelock_v1_QuotaRequest__Output } from '../../fencelock/v1/QuotaRequest';
import type { RoleRequest as _fencelock_v1_RoleRequest, RoleRequest__Output as _fencelock_v1_RoleRequest__Output } from '../../fencelock/v1/RoleRequest';
import type { TokenIssueRequest as _fencelock_v1_TokenIssueRequest, TokenIssueRequest__Output as _fencelock_v1_TokenIssueRequest__Output } from '../../fencelock/v1/TokenIssueRequest';
import type { TokenIssueResponse as _fencelock_v1_TokenIssueResponse, TokenIssueResponse__Output as _fencelock_v1_TokenIssueResponse__Output } from '../../fencelock/v1/TokenIssueResponse';
import type { TokenRevokeRequest as _fencelock_v1_TokenRevokeRequest, TokenRevokeRequest__Output as _fencelock_v1_TokenRevokeRequest__Output } from '../../fencelock/v1/TokenRevokeRequest';
import type { UserRequest as _fencelock_v1_UserRequest, UserRequest__Output as _fencelock_v1_UserRequest__Output } from '../../fencelock/v1/UserRequest';
import type { UserRoleRequest as _fencelock_v1_UserRoleRequest, UserRoleRequest__Output as _fencelock_v1_UserRoleRequest__Output } from '../../fencelock/v1/UserRoleRequest';
import type { WhoAmIRequest as _fencelock_v1_WhoAmIRequest, WhoAmIRequest__Output as _fencelock_v1_WhoAmIRequest__Output } from '../../fencelock/v1/WhoAmIRequest';
import type { WhoAmIResponse as _fencelock_v1_WhoAmIResponse, WhoAmIResponse__Output as _fencelock_v1_WhoAmIResponse__Output } from '../../fencelock/v1/WhoAmIResponse';

/**
 * Who may do what (docs/auth.md). An identity is the name in a client certificate's URI SAN
 * urn:fencelock:client:NAME (else its subject CN), or the user of a bearer token sent as `authorization:
 * Bearer flt_<id>_<secret>` metadata. With auth on, a call without an identity fails UNAUTHENTICATED and
 * a call the identity's roles do not allow fails PERMISSION_DENIED (reason PERMISSION_DENIED, or
 * NOT_SESSION_OWNER for a session another identity opened). Every change is a log entry and needs the
 * `admin` permission; WhoAmI and List are reads.
 */
export interface AuthClient extends grpc.Client {
  List(argument: _fencelock_v1_AuthListRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthListResponse__Output>): grpc.ClientUnaryCall;
  List(argument: _fencelock_v1_AuthListRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthListResponse__Output>): grpc.ClientUnaryCall;
  List(argument: _fencelock_v1_AuthListRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthListResponse__Output>): grpc.ClientUnaryCall;
  List(argument: _fencelock_v1_AuthListRequest, callback: grpc.requestCallback<_fencelock_v1_AuthListResponse__Output>): grpc.ClientUnaryCall;
  list(argument: _fencelock_v1_AuthListRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthListResponse__Output>): grpc.ClientUnaryCall;
  list(argument: _fencelock_v1_AuthListRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthListResponse__Output>): grpc.ClientUnaryCall;
  list(argument: _fencelock_v1_AuthListRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthListResponse__Output>): grpc.ClientUnaryCall;
  list(argument: _fencelock_v1_AuthListRequest, callback: grpc.requestCallback<_fencelock_v1_AuthListResponse__Output>): grpc.ClientUnaryCall;
  
  RoleAdd(argument: _fencelock_v1_RoleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  RoleAdd(argument: _fencelock_v1_RoleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  RoleAdd(argument: _fencelock_v1_RoleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  RoleAdd(argument: _fencelock_v1_RoleRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleAdd(argument: _fencelock_v1_RoleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleAdd(argument: _fencelock_v1_RoleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleAdd(argument: _fencelock_v1_RoleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleAdd(argument: _fencelock_v1_RoleRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  
  RoleDelete(argument: _fencelock_v1_RoleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  RoleDelete(argument: _fencelock_v1_RoleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  RoleDelete(argument: _fencelock_v1_RoleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  RoleDelete(argument: _fencelock_v1_RoleRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleDelete(argument: _fencelock_v1_RoleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleDelete(argument: _fencelock_v1_RoleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleDelete(argument: _fencelock_v1_RoleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleDelete(argument: _fencelock_v1_RoleRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  
  RoleGrantPermission(argument: _fencelock_v1_PermissionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  RoleGrantPermission(argument: _fencelock_v1_PermissionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  RoleGrantPermission(argument: _fencelock_v1_PermissionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  RoleGrantPermission(argument: _fencelock_v1_PermissionRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleGrantPermission(argument: _fencelock_v1_PermissionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleGrantPermission(argument: _fencelock_v1_PermissionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleGrantPermission(argument: _fencelock_v1_PermissionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleGrantPermission(argument: _fencelock_v1_PermissionRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  
  RoleRevokePermission(argument: _fencelock_v1_PermissionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  RoleRevokePermission(argument: _fencelock_v1_PermissionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  RoleRevokePermission(argument: _fencelock_v1_PermissionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  RoleRevokePermission(argument: _fencelock_v1_PermissionRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleRevokePermission(argument: _fencelock_v1_PermissionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleRevokePermission(argument: _fencelock_v1_PermissionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleRevokePermission(argument: _fencelock_v1_PermissionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleRevokePermission(argument: _fencelock_v1_PermissionRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  
  RoleSetQuota(argument: _fencelock_v1_QuotaRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  RoleSetQuota(argument: _fencelock_v1_QuotaRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  RoleSetQuota(argument: _fencelock_v1_QuotaRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  RoleSetQuota(argument: _fencelock_v1_QuotaRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleSetQuota(argument: _fencelock_v1_QuotaRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleSetQuota(argument: _fencelock_v1_QuotaRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleSetQuota(argument: _fencelock_v1_QuotaRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  roleSetQuota(argument: _fencelock_v1_QuotaRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  
  TokenIssue(argument: _fencelock_v1_TokenIssueRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_TokenIssueResponse__Output>): grpc.ClientUnaryCall;
  TokenIssue(argument: _fencelock_v1_TokenIssueRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_TokenIssueResponse__Output>): grpc.ClientUnaryCall;
  TokenIssue(argument: _fencelock_v1_TokenIssueRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_TokenIssueResponse__Output>): grpc.ClientUnaryCall;
  TokenIssue(argument: _fencelock_v1_TokenIssueRequest, callback: grpc.requestCallback<_fencelock_v1_TokenIssueResponse__Output>): grpc.ClientUnaryCall;
  tokenIssue(argument: _fencelock_v1_TokenIssueRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_TokenIssueResponse__Output>): grpc.ClientUnaryCall;
  tokenIssue(argument: _fencelock_v1_TokenIssueRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_TokenIssueResponse__Output>): grpc.ClientUnaryCall;
  tokenIssue(argument: _fencelock_v1_TokenIssueRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_TokenIssueResponse__Output>): grpc.ClientUnaryCall;
  tokenIssue(argument: _fencelock_v1_TokenIssueRequest, callback: grpc.requestCallback<_fencelock_v1_TokenIssueResponse__Output>): grpc.ClientUnaryCall;
  
  TokenRevoke(argument: _fencelock_v1_TokenRevokeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  TokenRevoke(argument: _fencelock_v1_TokenRevokeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  TokenRevoke(argument: _fencelock_v1_TokenRevokeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  TokenRevoke(argument: _fencelock_v1_TokenRevokeRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  tokenRevoke(argument: _fencelock_v1_TokenRevokeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  tokenRevoke(argument: _fencelock_v1_TokenRevokeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  tokenRevoke(argument: _fencelock_v1_TokenRevokeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  tokenRevoke(argument: _fencelock_v1_TokenRevokeRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  
  UserAdd(argument: _fencelock_v1_UserRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  UserAdd(argument: _fencelock_v1_UserRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  UserAdd(argument: _fencelock_v1_UserRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  UserAdd(argument: _fencelock_v1_UserRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  userAdd(argument: _fencelock_v1_UserRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  userAdd(argument: _fencelock_v1_UserRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  userAdd(argument: _fencelock_v1_UserRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  userAdd(argument: _fencelock_v1_UserRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  
  UserDelete(argument: _fencelock_v1_UserRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  UserDelete(argument: _fencelock_v1_UserRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  UserDelete(argument: _fencelock_v1_UserRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  UserDelete(argument: _fencelock_v1_UserRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  userDelete(argument: _fencelock_v1_UserRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  userDelete(argument: _fencelock_v1_UserRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  userDelete(argument: _fencelock_v1_UserRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  userDelete(argument: _fencelock_v1_UserRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  
  UserGrantRole(argument: _fencelock_v1_UserRoleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  UserGrantRole(argument: _fencelock_v1_UserRoleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  UserGrantRole(argument: _fencelock_v1_UserRoleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  UserGrantRole(argument: _fencelock_v1_UserRoleRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  userGrantRole(argument: _fencelock_v1_UserRoleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  userGrantRole(argument: _fencelock_v1_UserRoleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  userGrantRole(argument: _fencelock_v1_UserRoleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  userGrantRole(argument: _fencelock_v1_UserRoleRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  
  UserRevokeRole(argument: _fencelock_v1_UserRoleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  UserRevokeRole(argument: _fencelock_v1_UserRoleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  UserRevokeRole(argument: _fencelock_v1_UserRoleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  UserRevokeRole(argument: _fencelock_v1_UserRoleRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  userRevokeRole(argument: _fencelock_v1_UserRoleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  userRevokeRole(argument: _fencelock_v1_UserRoleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  userRevokeRole(argument: _fencelock_v1_UserRoleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  userRevokeRole(argument: _fencelock_v1_UserRoleRequest, callback: grpc.requestCallback<_fencelock_v1_AuthChangeResponse__Output>): grpc.ClientUnaryCall;
  
  WhoAmI(argument: _fencelock_v1_WhoAmIRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_WhoAmIResponse__Output>): grpc.ClientUnaryCall;
  WhoAmI(argument: _fencelock_v1_WhoAmIRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_WhoAmIResponse__Output>): grpc.ClientUnaryCall;
  WhoAmI(argument: _fencelock_v1_WhoAmIRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_WhoAmIResponse__Output>): grpc.ClientUnaryCall;
  WhoAmI(argument: _fencelock_v1_WhoAmIRequest, callback: grpc.requestCallback<_fencelock_v1_WhoAmIResponse__Output>): grpc.ClientUnaryCall;
  whoAmI(argument: _fencelock_v1_WhoAmIRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_WhoAmIResponse__Output>): grpc.ClientUnaryCall;
  whoAmI(argument: _fencelock_v1_WhoAmIRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_WhoAmIResponse__Output>): grpc.ClientUnaryCall;
  whoAmI(argument: _fencelock_v1_WhoAmIRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_WhoAmIResponse__Output>): grpc.ClientUnaryCall;
  whoAmI(argument: _fencelock_v1_WhoAmIRequest, callback: grpc.requestCallback<_fencelock_v1_WhoAmIResponse__Output>): grpc.ClientUnaryCall;
  
}

/**
 * Who may do what (docs/auth.md). An identity is the name in a client certificate's URI SAN
 * urn:fencelock:client:NAME (else its subject CN), or the user of a bearer token sent as `authorization:
 * Bearer flt_<id>_<secret>` metadata. With auth on, a call without an identity fails UNAUTHENTICATED and
 * a call the identity's roles do not allow fails PERMISSION_DENIED (reason PERMISSION_DENIED, or
 * NOT_SESSION_OWNER for a session another identity opened). Every change is a log entry and needs the
 * `admin` permission; WhoAmI and List are reads.
 */
export interface AuthHandlers extends grpc.UntypedServiceImplementation {
  List: grpc.handleUnaryCall<_fencelock_v1_AuthListRequest__Output, _fencelock_v1_AuthListResponse>;
  
  RoleAdd: grpc.handleUnaryCall<_fencelock_v1_RoleRequest__Output, _fencelock_v1_AuthChangeResponse>;
  
  RoleDelete: grpc.handleUnaryCall<_fencelock_v1_RoleRequest__Output, _fencelock_v1_AuthChangeResponse>;
  
  RoleGrantPermission: grpc.handleUnaryCall<_fencelock_v1_PermissionRequest__Output, _fencelock_v1_AuthChangeResponse>;
  
  RoleRevokePermission: grpc.handleUnaryCall<_fencelock_v1_PermissionRequest__Output, _fencelock_v1_AuthChangeResponse>;
  
  RoleSetQuota: grpc.handleUnaryCall<_fencelock_v1_QuotaRequest__Output, _fencelock_v1_AuthChangeResponse>;
  
  TokenIssue: grpc.handleUnaryCall<_fencelock_v1_TokenIssueRequest__Output, _fencelock_v1_TokenIssueResponse>;
  
  TokenRevoke: grpc.handleUnaryCall<_fencelock_v1_TokenRevokeRequest__Output, _fencelock_v1_AuthChangeResponse>;
  
  UserAdd: grpc.handleUnaryCall<_fencelock_v1_UserRequest__Output, _fencelock_v1_AuthChangeResponse>;
  
  UserDelete: grpc.handleUnaryCall<_fencelock_v1_UserRequest__Output, _fencelock_v1_AuthChangeResponse>;
  
  UserGrantRole: grpc.handleUnaryCall<_fencelock_v1_UserRoleRequest__Output, _fencelock_v1_AuthChangeResponse>;
  
  UserRevokeRole: grpc.handleUnaryCall<_fencelock_v1_UserRoleRequest__Output, _fencelock_v1_AuthChangeResponse>;
  
  WhoAmI: grpc.handleUnaryCall<_fencelock_v1_WhoAmIRequest__Output, _fencelock_v1_WhoAmIResponse>;
  
}

export interface AuthDefinition extends grpc.ServiceDefinition {
  List: MethodDefinition<_fencelock_v1_AuthListRequest, _fencelock_v1_AuthListResponse, _fencelock_v1_AuthListRequest__Output, _fencelock_v1_AuthListResponse__Output>
  RoleAdd: MethodDefinition<_fencelock_v1_RoleRequest, _fencelock_v1_AuthChangeResponse, _fencelock_v1_RoleRequest__Output, _fencelock_v1_AuthChangeResponse__Output>
  RoleDelete: MethodDefinition<_fencelock_v1_RoleRequest, _fencelock_v1_AuthChangeResponse, _fencelock_v1_RoleRequest__Output, _fencelock_v1_AuthChangeResponse__Output>
  RoleGrantPermission: MethodDefinition<_fencelock_v1_PermissionRequest, _fencelock_v1_AuthChangeResponse, _fencelock_v1_PermissionRequest__Output, _fencelock_v1_AuthChangeResponse__Output>
  RoleRevokePermission: MethodDefinition<_fencelock_v1_PermissionRequest, _fencelock_v1_AuthChangeResponse, _fencelock_v1_PermissionRequest__Output, _fencelock_v1_AuthChangeResponse__Output>
  RoleSetQuota: MethodDefinition<_fencelock_v1_QuotaRequest, _fencelock_v1_AuthChangeResponse, _fencelock_v1_QuotaRequest__Output, _fencelock_v1_AuthChangeResponse__Output>
  TokenIssue: MethodDefinition<_fencelock_v1_TokenIssueRequest, _fencelock_v1_TokenIssueResponse, _fencelock_v1_TokenIssueRequest__Output, _fencelock_v1_TokenIssueResponse__Output>
  TokenRevoke: MethodDefinition<_fencelock_v1_TokenRevokeRequest, _fencelock_v1_AuthChangeResponse, _fencelock_v1_TokenRevokeRequest__Output, _fencelock_v1_AuthChangeResponse__Output>
  UserAdd: MethodDefinition<_fencelock_v1_UserRequest, _fencelock_v1_AuthChangeResponse, _fencelock_v1_UserRequest__Output, _fencelock_v1_AuthChangeResponse__Output>
  UserDelete: MethodDefinition<_fencelock_v1_UserRequest, _fencelock_v1_AuthChangeResponse, _fencelock_v1_UserRequest__Output, _fencelock_v1_AuthChangeResponse__Output>
  UserGrantRole: MethodDefinition<_fencelock_v1_UserRoleRequest, _fencelock_v1_AuthChangeResponse, _fencelock_v1_UserRoleRequest__Output, _fencelock_v1_AuthChangeResponse__Output>
  UserRevokeRole: MethodDefinition<_fencelock_v1_UserRoleRequest, _fencelock_v1_AuthChangeResponse, _fencelock_v1_UserRoleRequest__Output, _fencelock_v1_AuthChangeResponse__Output>
  WhoAmI: MethodDefinition<_fencelock_v1_WhoAmIRequest, _fencelock_v1_WhoAmIResponse, _fencelock_v1_WhoAmIRequest__Output, _fencelock_v1_WhoAmIResponse__Output>
}
