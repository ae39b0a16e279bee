// Client services with strict request decoding (see strictDecode.ts for what is checked).
//
// grpc-js answers a deserializer that throws with INTERNAL ("Error deserializing request"), and its
// handlers never see the call. So the strict deserializer never throws: a request it refuses becomes an
// UndecodableRequest, and the implementation is wrapped so that such a request is answered with
// INVALID_ARGUMENT naming the field before any handler sees it:
// - a unary call (and a server-streaming call) fails with that status;
// - on a stream, a message that cannot be decoded ends the stream with that status, unless the service
//   says how to answer it on the stream (Pipeline: a CallResponse for its call_id, as its unary twin would
//   answer; the stream stays open).
// Definition and implementation are wrapped together, so a marker can never reach a plain handler.
import * as grpc from '@grpc/grpc-js';
import * as protobuf from 'protobufjs';
import * as descriptor from 'protobufjs/ext/descriptor';
import type { CallResponse } from '../../protocol/generated/fencelock/v1/CallResponse';
import { ApiError } from './errors';
import { walkMessage } from './strictDecode';

/** What a strict deserializer hands out instead of a request it refuses. */
export class UndecodableRequest {
  constructor(
    readonly error: ApiError,
    /** The request's top-level call_id (Pipeline), when it was read before the problem. */
    readonly callId?: string,
  ) {}
}

export interface StrictOptions {
  /**
   * For streaming calls: the message to write on the stream for a request that cannot be decoded, or
   * undefined to end the stream with the request's INVALID_ARGUMENT status (the default).
   */
  answerOnStream?: (bad: UndecodableRequest) => object | undefined;
}

/** Pipeline.Calls: a CallRequest whose call_id is known gets its own CallResponse with INVALID_ARGUMENT. */
export function answerPipelineCall(bad: UndecodableRequest): CallResponse | undefined {
  if (bad.callId === undefined) return undefined;
  return { callId: bad.callId, code: grpc.status.INVALID_ARGUMENT, message: bad.error.message, metadata: {} };
}

/**
 * The service `definition` (from proto-loader via loadPackageDefinition) with strict request decoding, and
 * `implementation` wrapped to answer refused requests; spread the result into server.addService.
 */
export function strictService(
  definition: grpc.ServiceDefinition,
  implementation: grpc.UntypedServiceImplementation,
  options: StrictOptions = {},
): [grpc.ServiceDefinition, grpc.UntypedServiceImplementation] {
  const strictDef: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  const strictImpl: grpc.UntypedServiceImplementation = { ...implementation };
  for (const [name, method] of Object.entries(definition as Record<string, grpc.MethodDefinition<unknown, unknown>>)) {
    strictDef[name] = { ...method, requestDeserialize: strictDeserializer(method) };
    const originalName = (method as { originalName?: string }).originalName;
    const key = implementation[name] !== undefined ? name : originalName;
    if (key === undefined || implementation[key] === undefined) continue; // grpc-js reports the missing method
    strictImpl[key] = answerUndecodable(method, implementation[key], options);
  }
  return [strictDef as grpc.ServiceDefinition, strictImpl];
}

/** The method's request deserializer, preceded by the strict walk; never throws. */
export function strictDeserializer(method: grpc.MethodDefinition<unknown, unknown>): (bytes: Buffer) => unknown {
  const type = requestType(method);
  const typeName = type.fullName.replace(/^\./, '');
  const lenient = method.requestDeserialize;
  return (bytes: Buffer) => {
    const { problem, callId } = walkMessage(type, bytes);
    if (problem) {
      const text = problem.field ? `${problem.field}: ${problem.why}` : `request: is not a valid ${typeName}: ${problem.why}`;
      return new UndecodableRequest(new ApiError(grpc.status.INVALID_ARGUMENT, text), callId);
    }
    try {
      return lenient(bytes);
    } catch (err) {
      const text = `request: could not be decoded as ${typeName} (${(err as Error).message}); the message is truncated or not protobuf`;
      return new UndecodableRequest(new ApiError(grpc.status.INVALID_ARGUMENT, text), callId);
    }
  };
}

type AnyHandler = grpc.UntypedHandleCall;

function answerUndecodable(method: grpc.MethodDefinition<unknown, unknown>, handler: AnyHandler, options: StrictOptions): AnyHandler {
  if (!method.requestStream) {
    if (!method.responseStream) {
      const unary = handler as grpc.handleUnaryCall<unknown, unknown>;
      return ((call, callback) => {
        if (call.request instanceof UndecodableRequest) callback(call.request.error.toServiceError() as grpc.ServiceError);
        else unary(call, callback);
      }) as grpc.handleUnaryCall<unknown, unknown>;
    }
    const serverStream = handler as grpc.handleServerStreamingCall<unknown, unknown>;
    return ((call) => {
      if (call.request instanceof UndecodableRequest) call.emit('error', call.request.error.toServiceError());
      else serverStream(call);
    }) as grpc.handleServerStreamingCall<unknown, unknown>;
  }
  const streaming = handler as (call: grpc.ServerReadableStream<unknown, unknown> | grpc.ServerDuplexStream<unknown, unknown>) => void;
  return ((call: grpc.ServerReadableStream<unknown, unknown> | grpc.ServerDuplexStream<unknown, unknown>) => {
    // Messages reach the handler's 'data' listeners through emit: refused ones are taken out there.
    const emit = call.emit.bind(call) as (event: string | symbol, ...args: unknown[]) => boolean;
    let failed = false;
    call.emit = ((event: string | symbol, ...args: unknown[]): boolean => {
      if (event !== 'data') return emit(event, ...args);
      if (failed) return false;
      const msg = args[0];
      if (!(msg instanceof UndecodableRequest)) return emit(event, ...args);
      if (call.cancelled) return true; // nobody to answer
      const answer = options.answerOnStream?.(msg);
      if (answer !== undefined && 'write' in call) {
        call.write(answer);
      } else {
        failed = true;
        emit('error', msg.error.toServiceError());
      }
      return true;
    }) as typeof call.emit;
    streaming(call);
  }) as AnyHandler;
}

// The reflected request type of a method, from the descriptors proto-loader keeps in its definition.
const roots = new WeakMap<Buffer[], protobuf.Root>();

function requestType(method: grpc.MethodDefinition<unknown, unknown>): protobuf.Type {
  const reflected = (method as { requestType?: { type?: { name?: string }; fileDescriptorProtos?: Buffer[] } }).requestType;
  const files = reflected?.fileDescriptorProtos;
  if (!files) throw new Error(`strictService: ${method.path} has no descriptors; load it with @grpc/proto-loader`);
  let root = roots.get(files);
  if (!root) {
    const set = { file: files.map((b) => descriptor.FileDescriptorProto.decode(b)) } as unknown as descriptor.IFileDescriptorSet;
    root = (protobuf.Root as unknown as { fromDescriptor(d: descriptor.IFileDescriptorSet): protobuf.Root }).fromDescriptor(set);
    root.resolveAll();
    roots.set(files, root);
  }
  // The method path is /package.Service/Method; its input type is resolved by the service descriptor.
  const [, serviceName, methodName] = /^\/(.+)\/([^/]+)$/.exec(method.path) ?? [];
  if (serviceName === undefined || methodName === undefined) throw new Error(`strictService: unexpected method path ${method.path}`);
  const service = root.lookupService(serviceName);
  const rpc = service.methods[methodName];
  if (!rpc) throw new Error(`strictService: ${serviceName} has no method ${methodName}`);
  const resolved = (rpc.resolve() as protobuf.Method).resolvedRequestType;
  if (!resolved) throw new Error(`strictService: cannot resolve the request type of ${method.path}`);
  return resolved;
}
