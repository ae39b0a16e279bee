import type * as grpc from '@grpc/grpc-js';
import * as path from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import type { CallRequest } from '../protocol/generated/fencelock/v1/CallRequest';
import type { CallResponse__Output } from '../protocol/generated/fencelock/v1/CallResponse';
import type { ProtoGrpcType } from '../protocol/generated/lock';
import { findProtoRoot } from './protoPath';

/*
 * The client speaks the messages of proto/fencelock/v1/lock.proto in the types generated from it
 * (src/protocol/generated, `npm run gen:proto`): for every method, what it may send (the message type) and
 * what the decoder yields (its `__Output` type), both taken from the generated service definitions. The
 * loader options below are the ones those types were generated for: camelCase field names, 64-bit integers
 * as decimal strings (read and written through src/protocol/wireInt.ts), enums as their names, bytes as
 * Buffer, every field present (defaults), the name of the oneof member set (oneofs).
 */

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
  semaphore: 'fencelock.v1.Semaphore',
  kv: 'fencelock.v1.KV',
  cluster: 'fencelock.v1.Cluster',
  pipeline: 'fencelock.v1.Pipeline',
  auth: 'fencelock.v1.Auth',
} as const;

type ServiceName = (typeof SERVICE_NAMES)[keyof typeof SERVICE_NAMES];

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
export function serviceDefinition(name: ServiceName): grpc.ServiceDefinition {
  const def = loadLockPackage()[name];
  if (!def || 'format' in def) throw new Error(`service ${name} is missing from lock.proto`);
  return def as unknown as grpc.ServiceDefinition;
}

/** The package's generated types: its messages, and its services with their definitions. */
type V1 = ProtoGrpcType['fencelock']['v1'];

/** The services of lock.proto by their short names (Lock, KV, ...), read off the generated package type. */
export type ServiceKey = { [K in keyof V1]: V1[K] extends { service: unknown } ? K : never }[keyof V1] & string;

/** The generated definition of one service. */
type DefinitionOf<S extends ServiceKey> = V1[S] extends { service: infer D } ? D : never;

/** The calls that travel on the Pipeline stream: the oneof member names of CallRequest and CallResponse. */
export type PipelineCall = NonNullable<CallRequest['call']>;

/** What a call of kind K sends inside a CallRequest, and what it reads from a CallResponse. */
export type PipelineRequest<K extends PipelineCall> = NonNullable<CallRequest[K]>;
export type PipelineResponse<K extends PipelineCall> = NonNullable<CallResponse__Output[K]>;

/** How one call travels on the Pipeline stream: as the member `kind` of the request's and the response's oneof. */
export interface PipelineRoute<Req, Res> {
  kind: PipelineCall;
  /** The CallRequest that carries `req`. */
  request(callId: string, timeoutMs: number, req: Req): CallRequest;
  /** The result an OK CallResponse carries (undefined, which the type does not show, from a server that left it out, as before). */
  result(res: CallResponse__Output): Res;
}

export function pipelineRoute<K extends PipelineCall>(kind: K): PipelineRoute<PipelineRequest<K>, PipelineResponse<K>> {
  return {
    kind,
    request(callId, timeoutMs, req) {
      const call: CallRequest = { callId, timeoutMs };
      call[kind] = req;
      return call;
    },
    result: (res) => res[kind] as PipelineResponse<K>,
  };
}

/** What is needed to call one method on a generic grpc-js Client. */
export interface MethodDesc<Req, Res> {
  path: string;
  serialize: (req: Req) => Buffer;
  deserialize: (buf: Buffer) => Res;
  /** Set when the call may also travel on the Pipeline stream. */
  pipeline?: PipelineRoute<Req, Res>;
}

/** A generated method definition's message type (what the client sends) and decoded response type. */
type DescOf<D> = D extends protoLoader.MethodDefinition<infer Req, infer _Sent, infer _Decoded, infer Res> ? MethodDesc<Req, Res> : never;

/** Every method of every service, by its generated name (methods().Lock.Acquire): typed, with no table to edit. */
export type GeneratedMethods = { [S in ServiceKey]: MethodsOf<DefinitionOf<S>> };

/** A service definition's named methods (without grpc's index signature, so a wrong name does not compile). */
type MethodsOf<D> = { [M in keyof D as string extends M ? never : M]: DescOf<D[M]> };

const PACKAGE = 'fencelock.v1.';

function generatedMethods(): GeneratedMethods {
  const services: Record<string, Record<string, MethodDesc<unknown, unknown>>> = {};
  for (const [name, def] of Object.entries(loadLockPackage())) {
    if (!name.startsWith(PACKAGE) || 'format' in def) continue; // a message or an enum
    const methods: Record<string, MethodDesc<unknown, unknown>> = {};
    for (const [method, d] of Object.entries(def as grpc.ServiceDefinition)) {
      methods[method] = { path: d.path, serialize: d.requestSerialize, deserialize: d.responseDeserialize };
    }
    services[name.slice(PACKAGE.length)] = methods;
  }
  // The loader's definitions are untyped; lock.proto is the one source of both them and the generated types.
  return services as unknown as GeneratedMethods;
}

/** A method that may also travel on the Pipeline stream: tsc checks that both ways carry the same messages. */
function pipelined<Req, Res>(desc: MethodDesc<Req, Res>, route: PipelineRoute<Req, Res>): MethodDesc<Req, Res> {
  return { ...desc, pipeline: route };
}

function allMethods() {
  const { Session, Lock, Semaphore, KV, Cluster, Pipeline, Auth } = generatedMethods();
  // Every method by its generated name (methods().Lock.Describe): a new RPC needs no entry here. The calls
  // that may also travel on the Pipeline stream carry their route.
  return {
    Session,
    Lock: { ...Lock, Acquire: pipelined(Lock.Acquire, pipelineRoute('acquire')), Release: pipelined(Lock.Release, pipelineRoute('release')) },
    Semaphore: {
      ...Semaphore,
      Acquire: pipelined(Semaphore.Acquire, pipelineRoute('semaphoreAcquire')),
      Release: pipelined(Semaphore.Release, pipelineRoute('semaphoreRelease')),
    },
    KV: { ...KV, Write: pipelined(KV.Write, pipelineRoute('write')), Get: pipelined(KV.Get, pipelineRoute('get')) },
    Cluster,
    Pipeline,
    Auth,
  };
}

/** Method descriptors of every call the client makes, typed by the generated service definitions. */
export type Methods = ReturnType<typeof allMethods>;

let cachedMethods: Methods | undefined;

/** Method descriptors of every call the client makes. */
export function methods(): Methods {
  cachedMethods ??= allMethods();
  return cachedMethods;
}
