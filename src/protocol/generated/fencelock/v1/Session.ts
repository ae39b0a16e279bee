// Original file: proto/fencelock/v1/lock.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CloseSessionRequest as _fencelock_v1_CloseSessionRequest, CloseSessionRequest__Output as _fencelock_v1_CloseSessionRequest__Output } from '../../fencelock/v1/CloseSessionRequest';
import type { CloseSessionResponse as _fencelock_v1_CloseSessionResponse, CloseSessionResponse__Output as _fencelock_v1_CloseSessionResponse__Output } from '../../fencelock/v1/CloseSessionResponse';
import type { KeepAliveRequest as _fencelock_v1_KeepAliveRequest, KeepAliveRequest__Output as _fencelock_v1_KeepAliveRequest__Output } from '../../fencelock/v1/KeepAliveRequest';
import type { KeepAliveResponse as _fencelock_v1_KeepAliveResponse, KeepAliveResponse__Output as _fencelock_v1_KeepAliveResponse__Output } from '../../fencelock/v1/KeepAliveResponse';
import type { OpenSessionRequest as _fencelock_v1_OpenSessionRequest, OpenSessionRequest__Output as _fencelock_v1_OpenSessionRequest__Output } from '../../fencelock/v1/OpenSessionRequest';
import type { OpenSessionResponse as _fencelock_v1_OpenSessionResponse, OpenSessionResponse__Output as _fencelock_v1_OpenSessionResponse__Output } from '../../fencelock/v1/OpenSessionResponse';

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
  
  Open(argument: _fencelock_v1_OpenSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  Open(argument: _fencelock_v1_OpenSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  Open(argument: _fencelock_v1_OpenSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  Open(argument: _fencelock_v1_OpenSessionRequest, callback: grpc.requestCallback<_fencelock_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  open(argument: _fencelock_v1_OpenSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  open(argument: _fencelock_v1_OpenSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  open(argument: _fencelock_v1_OpenSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  open(argument: _fencelock_v1_OpenSessionRequest, callback: grpc.requestCallback<_fencelock_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface SessionHandlers extends grpc.UntypedServiceImplementation {
  Close: grpc.handleUnaryCall<_fencelock_v1_CloseSessionRequest__Output, _fencelock_v1_CloseSessionResponse>;
  
  /**
   * One stream per client carries renewals of all its sessions.
   */
  KeepAlive: grpc.handleBidiStreamingCall<_fencelock_v1_KeepAliveRequest__Output, _fencelock_v1_KeepAliveResponse>;
  
  Open: grpc.handleUnaryCall<_fencelock_v1_OpenSessionRequest__Output, _fencelock_v1_OpenSessionResponse>;
  
}

export interface SessionDefinition extends grpc.ServiceDefinition {
  Close: MethodDefinition<_fencelock_v1_CloseSessionRequest, _fencelock_v1_CloseSessionResponse, _fencelock_v1_CloseSessionRequest__Output, _fencelock_v1_CloseSessionResponse__Output>
  KeepAlive: MethodDefinition<_fencelock_v1_KeepAliveRequest, _fencelock_v1_KeepAliveResponse, _fencelock_v1_KeepAliveRequest__Output, _fencelock_v1_KeepAliveResponse__Output>
  Open: MethodDefinition<_fencelock_v1_OpenSessionRequest, _fencelock_v1_OpenSessionResponse, _fencelock_v1_OpenSessionRequest__Output, _fencelock_v1_OpenSessionResponse__Output>
}
