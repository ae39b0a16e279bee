// An RPC as a small declaration: its name and its logic on typed messages. One declaration serves its own
// unary method and, for the hot calls, the Pipeline stream (pipelineService.ts), so the two cannot drift.
import type * as grpc from '@grpc/grpc-js';
import type { CallRequest__Output } from '../../protocol/generated/fencelock/v1/CallRequest';
import type { CallResponse__Output } from '../../protocol/generated/fencelock/v1/CallResponse';
import { unary, type CallScope } from './context';

/**
 * A call's logic, apart from how it arrived. Requests are what the strict deserializer hands out (the
 * generated `__Output` shapes: every field present, 64-bit integers as decimal strings); responses are
 * the same decoded shape, so a handler names every field the client reads and puts a 64-bit integer on
 * the wire only as a string (made by intToWire).
 */
export interface Rpc<Req, Res> {
  /** Service.Method: the gRPC method, and its name in metrics and logs. */
  readonly name: string;
  readonly handle: (req: Req, call: CallScope) => Promise<Res>;
  /** Served to a caller without an identity too (WhoAmI). */
  readonly optionalIdentity?: boolean;
}

/** Any RPC, whatever its messages. */
export type AnyRpc = Rpc<never, unknown>;

/** Calls that may travel on the Pipeline stream: the oneof field names of CallRequest. */
export type PipelineCall = NonNullable<CallRequest__Output['call']>;

/** The declarations of the Pipeline's calls, by their CallRequest field; their messages are the generated ones. */
export type PipelineCalls = { [K in PipelineCall]: Rpc<NonNullable<CallRequest__Output[K]>, NonNullable<CallResponse__Output[K]>> };

/** The unary methods of one service, from their declarations. */
export function unaryMethods(ctx: Parameters<typeof unary>[0], rpcs: readonly AnyRpc[]): grpc.UntypedServiceImplementation {
  const methods: grpc.UntypedServiceImplementation = {};
  for (const rpc of rpcs) methods[methodOf(rpc.name)] = unary(ctx, rpc.name, rpc.handle, rpc.optionalIdentity) as grpc.UntypedHandleCall;
  return methods;
}

function methodOf(name: string): string {
  const method = name.slice(name.lastIndexOf('.') + 1);
  if (method === '' || method === name) throw new Error(`rpc: ${name} is not Service.Method`);
  return method;
}
