// Original file: proto/fencelock/v1/lock.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CallRequest as _fencelock_v1_CallRequest, CallRequest__Output as _fencelock_v1_CallRequest__Output } from '../../fencelock/v1/CallRequest';
import type { CallResponse as _fencelock_v1_CallResponse, CallResponse__Output as _fencelock_v1_CallResponse__Output } from '../../fencelock/v1/CallResponse';

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
export interface PipelineClient extends grpc.Client {
  Calls(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencelock_v1_CallRequest, _fencelock_v1_CallResponse__Output>;
  Calls(options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencelock_v1_CallRequest, _fencelock_v1_CallResponse__Output>;
  calls(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencelock_v1_CallRequest, _fencelock_v1_CallResponse__Output>;
  calls(options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencelock_v1_CallRequest, _fencelock_v1_CallResponse__Output>;
  
}

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
export interface PipelineHandlers extends grpc.UntypedServiceImplementation {
  Calls: grpc.handleBidiStreamingCall<_fencelock_v1_CallRequest__Output, _fencelock_v1_CallResponse>;
  
}

export interface PipelineDefinition extends grpc.ServiceDefinition {
  Calls: MethodDefinition<_fencelock_v1_CallRequest, _fencelock_v1_CallResponse, _fencelock_v1_CallRequest__Output, _fencelock_v1_CallResponse__Output>
}
