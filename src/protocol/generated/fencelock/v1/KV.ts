// Original file: proto/fencelock/v1/lock.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { GetRequest as _fencelock_v1_GetRequest, GetRequest__Output as _fencelock_v1_GetRequest__Output } from '../../fencelock/v1/GetRequest';
import type { GetResponse as _fencelock_v1_GetResponse, GetResponse__Output as _fencelock_v1_GetResponse__Output } from '../../fencelock/v1/GetResponse';
import type { ListRequest as _fencelock_v1_ListRequest, ListRequest__Output as _fencelock_v1_ListRequest__Output } from '../../fencelock/v1/ListRequest';
import type { ListResponse as _fencelock_v1_ListResponse, ListResponse__Output as _fencelock_v1_ListResponse__Output } from '../../fencelock/v1/ListResponse';
import type { MoveRequest as _fencelock_v1_MoveRequest, MoveRequest__Output as _fencelock_v1_MoveRequest__Output } from '../../fencelock/v1/MoveRequest';
import type { MoveResponse as _fencelock_v1_MoveResponse, MoveResponse__Output as _fencelock_v1_MoveResponse__Output } from '../../fencelock/v1/MoveResponse';
import type { WriteRequest as _fencelock_v1_WriteRequest, WriteRequest__Output as _fencelock_v1_WriteRequest__Output } from '../../fencelock/v1/WriteRequest';
import type { WriteResponse as _fencelock_v1_WriteResponse, WriteResponse__Output as _fencelock_v1_WriteResponse__Output } from '../../fencelock/v1/WriteResponse';

export interface KVClient extends grpc.Client {
  Get(argument: _fencelock_v1_GetRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_GetResponse__Output>): grpc.ClientUnaryCall;
  Get(argument: _fencelock_v1_GetRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_GetResponse__Output>): grpc.ClientUnaryCall;
  Get(argument: _fencelock_v1_GetRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_GetResponse__Output>): grpc.ClientUnaryCall;
  Get(argument: _fencelock_v1_GetRequest, callback: grpc.requestCallback<_fencelock_v1_GetResponse__Output>): grpc.ClientUnaryCall;
  get(argument: _fencelock_v1_GetRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_GetResponse__Output>): grpc.ClientUnaryCall;
  get(argument: _fencelock_v1_GetRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_GetResponse__Output>): grpc.ClientUnaryCall;
  get(argument: _fencelock_v1_GetRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_GetResponse__Output>): grpc.ClientUnaryCall;
  get(argument: _fencelock_v1_GetRequest, callback: grpc.requestCallback<_fencelock_v1_GetResponse__Output>): grpc.ClientUnaryCall;
  
  List(argument: _fencelock_v1_ListRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_ListResponse__Output>): grpc.ClientUnaryCall;
  List(argument: _fencelock_v1_ListRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_ListResponse__Output>): grpc.ClientUnaryCall;
  List(argument: _fencelock_v1_ListRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_ListResponse__Output>): grpc.ClientUnaryCall;
  List(argument: _fencelock_v1_ListRequest, callback: grpc.requestCallback<_fencelock_v1_ListResponse__Output>): grpc.ClientUnaryCall;
  list(argument: _fencelock_v1_ListRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_ListResponse__Output>): grpc.ClientUnaryCall;
  list(argument: _fencelock_v1_ListRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_ListResponse__Output>): grpc.ClientUnaryCall;
  list(argument: _fencelock_v1_ListRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_ListResponse__Output>): grpc.ClientUnaryCall;
  list(argument: _fencelock_v1_ListRequest, callback: grpc.requestCallback<_fencelock_v1_ListResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Admin only: binds a key, or every key under a prefix (at most 10,000), to another lock that nobody
   * holds or waits for. Watermarks stay; the lock's latest token is raised to the highest of them.
   */
  Move(argument: _fencelock_v1_MoveRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MoveResponse__Output>): grpc.ClientUnaryCall;
  Move(argument: _fencelock_v1_MoveRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_MoveResponse__Output>): grpc.ClientUnaryCall;
  Move(argument: _fencelock_v1_MoveRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MoveResponse__Output>): grpc.ClientUnaryCall;
  Move(argument: _fencelock_v1_MoveRequest, callback: grpc.requestCallback<_fencelock_v1_MoveResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Admin only: binds a key, or every key under a prefix (at most 10,000), to another lock that nobody
   * holds or waits for. Watermarks stay; the lock's latest token is raised to the highest of them.
   */
  move(argument: _fencelock_v1_MoveRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MoveResponse__Output>): grpc.ClientUnaryCall;
  move(argument: _fencelock_v1_MoveRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_MoveResponse__Output>): grpc.ClientUnaryCall;
  move(argument: _fencelock_v1_MoveRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_MoveResponse__Output>): grpc.ClientUnaryCall;
  move(argument: _fencelock_v1_MoveRequest, callback: grpc.requestCallback<_fencelock_v1_MoveResponse__Output>): grpc.ClientUnaryCall;
  
  Write(argument: _fencelock_v1_WriteRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_WriteResponse__Output>): grpc.ClientUnaryCall;
  Write(argument: _fencelock_v1_WriteRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_WriteResponse__Output>): grpc.ClientUnaryCall;
  Write(argument: _fencelock_v1_WriteRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_WriteResponse__Output>): grpc.ClientUnaryCall;
  Write(argument: _fencelock_v1_WriteRequest, callback: grpc.requestCallback<_fencelock_v1_WriteResponse__Output>): grpc.ClientUnaryCall;
  write(argument: _fencelock_v1_WriteRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_WriteResponse__Output>): grpc.ClientUnaryCall;
  write(argument: _fencelock_v1_WriteRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencelock_v1_WriteResponse__Output>): grpc.ClientUnaryCall;
  write(argument: _fencelock_v1_WriteRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencelock_v1_WriteResponse__Output>): grpc.ClientUnaryCall;
  write(argument: _fencelock_v1_WriteRequest, callback: grpc.requestCallback<_fencelock_v1_WriteResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface KVHandlers extends grpc.UntypedServiceImplementation {
  Get: grpc.handleUnaryCall<_fencelock_v1_GetRequest__Output, _fencelock_v1_GetResponse>;
  
  List: grpc.handleUnaryCall<_fencelock_v1_ListRequest__Output, _fencelock_v1_ListResponse>;
  
  /**
   * Admin only: binds a key, or every key under a prefix (at most 10,000), to another lock that nobody
   * holds or waits for. Watermarks stay; the lock's latest token is raised to the highest of them.
   */
  Move: grpc.handleUnaryCall<_fencelock_v1_MoveRequest__Output, _fencelock_v1_MoveResponse>;
  
  Write: grpc.handleUnaryCall<_fencelock_v1_WriteRequest__Output, _fencelock_v1_WriteResponse>;
  
}

export interface KVDefinition extends grpc.ServiceDefinition {
  Get: MethodDefinition<_fencelock_v1_GetRequest, _fencelock_v1_GetResponse, _fencelock_v1_GetRequest__Output, _fencelock_v1_GetResponse__Output>
  List: MethodDefinition<_fencelock_v1_ListRequest, _fencelock_v1_ListResponse, _fencelock_v1_ListRequest__Output, _fencelock_v1_ListResponse__Output>
  Move: MethodDefinition<_fencelock_v1_MoveRequest, _fencelock_v1_MoveResponse, _fencelock_v1_MoveRequest__Output, _fencelock_v1_MoveResponse__Output>
  Write: MethodDefinition<_fencelock_v1_WriteRequest, _fencelock_v1_WriteResponse, _fencelock_v1_WriteRequest__Output, _fencelock_v1_WriteResponse__Output>
}
