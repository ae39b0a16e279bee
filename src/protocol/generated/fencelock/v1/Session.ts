// Original file: proto/fencelock/v1/lock.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CloseSessionRequest as _fencelock_v1_CloseSessionRequest, CloseSessionRequest__Output as _fencelock_v1_CloseSessionRequest__Output } from '../../fencelock/v1/CloseSessionRequest';
import type { CloseSessionResponse as _fencelock_v1_CloseSessionResponse, CloseSessionResponse__Output as _fencelock_v1_CloseSessionResponse__Output } from '../../fencelock/v1/CloseSessionResponse';
import type { KeepAliveRequest as _fencelock_v1_KeepAliveRequest, KeepAliveRequest__Output as _fencelock_v1_KeepAliveRequest__Output } from '../../fencelock/v1/KeepAliveRequest';
import type { KeepAliveResponse as _fencelock_v1_KeepAliveResponse, KeepAliveResponse__Output as _fencelock_v1_KeepAliveResponse__Output } from '../../fencelock/v1/KeepAliveResponse';
import type { ListSessionsRequest as _fencelock_v1_ListSessionsRequest, ListSessionsRequest__Output as _fencelock_v1_ListSessionsRequest__Output } from '../../fencelock/v1/ListSessionsRequest';
import type { ListSessionsResponse as _fencelock_v1_ListSessionsResponse, ListSessionsResponse__Output as _fencelock_v1_ListSessionsResponse__Output } from '../../fencelock/v1/ListSessionsResponse';
import type { OpenSessionRequest as _fencelock_v1_OpenSessionRequest, OpenSessionRequest__Output as _fencelock_v1_OpenSessionRequest__Output } from '../../fencelock/v1/OpenSessionRequest';
import type { OpenSessionResponse as _fencelock_v1_OpenSessionResponse, OpenSessionResponse__Output as _fencelock_v1_OpenSessionResponse__Output } from '../../fencelock/v1/OpenSessionResponse';
import type { RevokeSessionRequest as _fencelock_v1_RevokeSessionRequest, RevokeSessionRequest__Output as _fencelock_v1_RevokeSessionRequest__Output } from '../../fencelock/v1/RevokeSessionRequest';
import type { RevokeSessionResponse as _fencelock_v1_RevokeSessionResponse, RevokeSessionResponse__Output as _fencelock_v1_RevokeSessionResponse__Output } from '../../fencelock/v1/RevokeSessionResponse';

export interface SessionClient extends grpc.Client {
  Close(argument: _fencelock_v1_CloseSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_CloseSessionResponse__Output>): grpc.ClientUnaryCall;
  Close(argument: _fencelock_v1_CloseSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_CloseSessionResponse__Output>): grpc.ClientUnaryCall;
  Close(argument: _fencelock_v1_CloseSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_CloseSessionResponse__Output>): grpc.ClientUnaryCall;
  Close(argument: _fencelock_v1_CloseSessionRequest, callback: grpc.requestCallback<_fencelock_v1_CloseSessionResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * One stream per client carries renewals of all its sessions.
   */
  KeepAlive(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencelock_v1_KeepAliveRequest, _fencelock_v1_KeepAliveResponse__Output>;
  KeepAlive(options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencelock_v1_KeepAliveRequest, _fencelock_v1_KeepAliveResponse__Output>;
  /**
   * One stream per client carries renewals of all its sessions.
   */
  keepAlive(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencelock_v1_KeepAliveRequest, _fencelock_v1_KeepAliveResponse__Output>;
  keepAlive(options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencelock_v1_KeepAliveRequest, _fencelock_v1_KeepAliveResponse__Output>;
  
  /**
   * Admin only (docs/auth.md "Ending sessions"): every open session by its public handle, and ending one.
   */
  List(argument: _fencelock_v1_ListSessionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
  List(argument: _fencelock_v1_ListSessionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
  List(argument: _fencelock_v1_ListSessionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
  List(argument: _fencelock_v1_ListSessionsRequest, callback: grpc.requestCallback<_fencelock_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Admin only (docs/auth.md "Ending sessions"): every open session by its public handle, and ending one.
   */
  list(argument: _fencelock_v1_ListSessionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
  list(argument: _fencelock_v1_ListSessionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
  list(argument: _fencelock_v1_ListSessionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
  list(argument: _fencelock_v1_ListSessionsRequest, callback: grpc.requestCallback<_fencelock_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
  
  Open(argument: _fencelock_v1_OpenSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  Open(argument: _fencelock_v1_OpenSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  Open(argument: _fencelock_v1_OpenSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  Open(argument: _fencelock_v1_OpenSessionRequest, callback: grpc.requestCallback<_fencelock_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  open(argument: _fencelock_v1_OpenSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  open(argument: _fencelock_v1_OpenSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  open(argument: _fencelock_v1_OpenSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  open(argument: _fencelock_v1_OpenSessionRequest, callback: grpc.requestCallback<_fencelock_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  
  Revoke(argument: _fencelock_v1_RevokeSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_RevokeSessionResponse__Output>): grpc.ClientUnaryCall;
  Revoke(argument: _fencelock_v1_RevokeSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_RevokeSessionResponse__Output>): grpc.ClientUnaryCall;
  Revoke(argument: _fencelock_v1_RevokeSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_RevokeSessionResponse__Output>): grpc.ClientUnaryCall;
  Revoke(argument: _fencelock_v1_RevokeSessionRequest, callback: grpc.requestCallback<_fencelock_v1_RevokeSessionResponse__Output>): grpc.ClientUnaryCall;
  revoke(argument: _fencelock_v1_RevokeSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_RevokeSessionResponse__Output>): grpc.ClientUnaryCall;
  revoke(argument: _fencelock_v1_RevokeSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_RevokeSessionResponse__Output>): grpc.ClientUnaryCall;
  revoke(argument: _fencelock_v1_RevokeSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_RevokeSessionResponse__Output>): grpc.ClientUnaryCall;
  revoke(argument: _fencelock_v1_RevokeSessionRequest, callback: grpc.requestCallback<_fencelock_v1_RevokeSessionResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface SessionHandlers extends grpc.UntypedServiceImplementation {
  Close: grpc.handleUnaryCall<_fencelock_v1_CloseSessionRequest__Output, _fencelock_v1_CloseSessionResponse>;
  
  /**
   * One stream per client carries renewals of all its sessions.
   */
  KeepAlive: grpc.handleBidiStreamingCall<_fencelock_v1_KeepAliveRequest__Output, _fencelock_v1_KeepAliveResponse>;
  
  /**
   * Admin only (docs/auth.md "Ending sessions"): every open session by its public handle, and ending one.
   */
  List: grpc.handleUnaryCall<_fencelock_v1_ListSessionsRequest__Output, _fencelock_v1_ListSessionsResponse>;
  
  Open: grpc.handleUnaryCall<_fencelock_v1_OpenSessionRequest__Output, _fencelock_v1_OpenSessionResponse>;
  
  Revoke: grpc.handleUnaryCall<_fencelock_v1_RevokeSessionRequest__Output, _fencelock_v1_RevokeSessionResponse>;
  
}

export interface SessionDefinition extends grpc.ServiceDefinition {
  Close: MethodDefinition<_fencelock_v1_CloseSessionRequest, _fencelock_v1_CloseSessionResponse, _fencelock_v1_CloseSessionRequest__Output, _fencelock_v1_CloseSessionResponse__Output>
  KeepAlive: MethodDefinition<_fencelock_v1_KeepAliveRequest, _fencelock_v1_KeepAliveResponse, _fencelock_v1_KeepAliveRequest__Output, _fencelock_v1_KeepAliveResponse__Output>
  List: MethodDefinition<_fencelock_v1_ListSessionsRequest, _fencelock_v1_ListSessionsResponse, _fencelock_v1_ListSessionsRequest__Output, _fencelock_v1_ListSessionsResponse__Output>
  Open: MethodDefinition<_fencelock_v1_OpenSessionRequest, _fencelock_v1_OpenSessionResponse, _fencelock_v1_OpenSessionRequest__Output, _fencelock_v1_OpenSessionResponse__Output>
  Revoke: MethodDefinition<_fencelock_v1_RevokeSessionRequest, _fencelock_v1_RevokeSessionResponse, _fencelock_v1_RevokeSessionRequest__Output, _fencelock_v1_RevokeSessionResponse__Output>
}
