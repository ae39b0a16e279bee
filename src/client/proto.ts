import type * as grpc from '@grpc/grpc-js';
import * as path from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import type { AuthDefinition } from '../protocol/generated/fencelock/v1/Auth';
import type { CallRequest } from '../protocol/generated/fencelock/v1/CallRequest';
import type { CallResponse__Output } from '../protocol/generated/fencelock/v1/CallResponse';
import type { ClusterDefinition } from '../protocol/generated/fencelock/v1/Cluster';
import type { KVDefinition } from '../protocol/generated/fencelock/v1/KV';
import type { LockDefinition } from '../protocol/generated/fencelock/v1/Lock';
import type { PipelineDefinition } from '../protocol/generated/fencelock/v1/Pipeline';
import type { SessionDefinition } from '../protocol/generated/fencelock/v1/Session';
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

/** The generated definition of each service, by its fully qualified name. */
interface ServiceDefinitions {
  'fencelock.v1.Session': SessionDefinition;
  'fencelock.v1.Lock': LockDefinition;
  'fencelock.v1.KV': KVDefinition;
  'fencelock.v1.Cluster': ClusterDefinition;
  'fencelock.v1.Pipeline': PipelineDefinition;
  'fencelock.v1.Auth': AuthDefinition;
}

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

function method<S extends ServiceName, M extends keyof ServiceDefinitions[S] & string>(service: S, name: M): DescOf<ServiceDefinitions[S][M]> {
  const def = serviceDefinition(service)[name];
  if (!def) throw new Error(`method ${service}/${name} is missing from lock.proto`);
  // The loader's definitions are untyped; lock.proto is the one source of both them and the generated types.
  const desc: MethodDesc<unknown, unknown> = { path: def.path, serialize: def.requestSerialize, deserialize: def.responseDeserialize };
  return desc as DescOf<ServiceDefinitions[S][M]>;
}

/** A method that may also travel on the Pipeline stream: tsc checks that both ways carry the same messages. */
function pipelined<Req, Res>(desc: MethodDesc<Req, Res>, route: PipelineRoute<Req, Res>): MethodDesc<Req, Res> {
  return { ...desc, pipeline: route };
}

function allMethods() {
  const { session, lock, kv, cluster, pipeline, auth } = SERVICE_NAMES;
  return {
    open: method(session, 'Open'),
    keepAlive: method(session, 'KeepAlive'),
    closeSession: method(session, 'Close'),
    acquire: pipelined(method(lock, 'Acquire'), pipelineRoute('acquire')),
    release: pipelined(method(lock, 'Release'), pipelineRoute('release')),
    describe: method(lock, 'Describe'),
    listLocks: method(lock, 'List'),
    watch: method(lock, 'Watch'),
    write: pipelined(method(kv, 'Write'), pipelineRoute('write')),
    get: pipelined(method(kv, 'Get'), pipelineRoute('get')),
    list: method(kv, 'List'),
    move: method(kv, 'Move'),
    status: method(cluster, 'Status'),
    snapshot: method(cluster, 'Snapshot'),
    pipelineCalls: method(pipeline, 'Calls'),
    members: {
      MemberList: method(cluster, 'MemberList'),
      MemberAdd: method(cluster, 'MemberAdd'),
      MemberPromote: method(cluster, 'MemberPromote'),
      MemberRemove: method(cluster, 'MemberRemove'),
    },
    auth: {
      WhoAmI: method(auth, 'WhoAmI'),
      List: method(auth, 'List'),
      UserAdd: method(auth, 'UserAdd'),
      UserDelete: method(auth, 'UserDelete'),
      UserGrantRole: method(auth, 'UserGrantRole'),
      UserRevokeRole: method(auth, 'UserRevokeRole'),
      RoleAdd: method(auth, 'RoleAdd'),
      RoleDelete: method(auth, 'RoleDelete'),
      RoleGrantPermission: method(auth, 'RoleGrantPermission'),
      RoleRevokePermission: method(auth, 'RoleRevokePermission'),
      RoleSetQuota: method(auth, 'RoleSetQuota'),
      TokenIssue: method(auth, 'TokenIssue'),
      TokenRevoke: method(auth, 'TokenRevoke'),
      /** Session.List and Session.Revoke: admin calls, so they live with the Auth methods in the client. */
      SessionList: method(session, 'List'),
      SessionRevoke: method(session, 'Revoke'),
    },
  };
}

/** Method descriptors of every call the client makes, typed by the generated service definitions. */
export type Methods = ReturnType<typeof allMethods>;
export type AuthMethods = Methods['auth'];
export type MemberMethods = Methods['members'];

let cachedMethods: Methods | undefined;

/** Method descriptors of every call the client makes. */
export function methods(): Methods {
  cachedMethods ??= allMethods();
  return cachedMethods;
}
