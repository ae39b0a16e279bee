/**
 * The client API a runtime serves: the service implementations (the runtime's services, the Pipeline over
 * the lock and KV calls), each wrapped by strictService for strict decoding and, on the real listeners, by
 * capStreams for the per-connection and per-identity stream caps. One definition for the gRPC listener
 * (server.ts), the HTTP gateway (src/node/http) and the simulator (test/nodesim), so that every way in runs
 * the same handlers with the same checks.
 */
import type * as grpc from '@grpc/grpc-js';
import { serviceDefinition } from '../../client/proto';
import type { Caller, IdentifiableCall } from '../auth/caller';
import type { NodeRuntime } from '../runtime/nodeRuntime';
import { capStreams, CONNECTION_CAPS, ConnectionLimits } from './connectionLimits';
import type { ApiError } from './errors';
import { pipelineService } from './pipelineService';
import { answerPipelineCall, strictDeserializer, strictService } from './strictService';

export interface ServedMethod {
  definition: grpc.MethodDefinition<unknown, unknown>;
  handler: grpc.UntypedHandleCall;
}

export interface ServedApi {
  /** What to hand to grpc.Server.addService, one pair per service. */
  services: Array<[grpc.ServiceDefinition, grpc.UntypedServiceImplementation]>;
  /** The same handlers by method path (/fencelock.v1.Lock/Acquire). */
  methods: Map<string, ServedMethod>;
  /** The stream counts the caps are checked against (shared by every listener that serves `methods`). */
  limits: ConnectionLimits;
}

export interface ServeOptions {
  /** Count long-lived streams per connection and identity (false: the simulator, whose few clients never reach the caps). */
  capped?: boolean;
  /** Told of every refusal at a cap, by "Service.Method". */
  refused?: (method: string, err: ApiError) => void;
}

/** Builds the served API of `runtime` (one incarnation of a node). */
export function serveApi(runtime: NodeRuntime, options: ServeOptions = {}): ServedApi {
  const { session, lock, semaphore, kv, cluster, auth } = runtime.services;
  const ctx = runtime.context;
  const limits = new ConnectionLimits(CONNECTION_CAPS, (identity, quota) => runtime.app.machine.auth.quotaOf(identity, quota));
  const identify = (call: IdentifiableCall): Caller => ctx.access.callerOf(call);
  const pipeline = pipelineService(ctx.logger, { ...lock.calls, ...semaphore.calls, ...kv.calls }, {
    limits,
    identify,
    metrics: runtime.metrics.api,
    watchRights: (caller, onLost) => ctx.rights.watch(caller, onLost),
    timers: ctx.ports.timers,
    decodeCall: strictDeserializer(serviceDefinition('fencelock.v1.Pipeline').Calls as grpc.MethodDefinition<unknown, unknown>),
  });
  const cap = (name: string, implementation: grpc.UntypedServiceImplementation, methods: Parameters<typeof capStreams>[1]): grpc.UntypedServiceImplementation =>
    options.capped === false ? implementation : capStreams(implementation, methods, limits, identify, (method, err) => options.refused?.(`${name}.${method}`, err));
  const services: Array<[grpc.ServiceDefinition, grpc.UntypedServiceImplementation]> = [
    strictService(serviceDefinition('fencelock.v1.Session'), cap('Session', session.service, { KeepAlive: 'KeepAlive streams' })),
    strictService(serviceDefinition('fencelock.v1.Lock'), cap('Lock', lock.service, { Watch: 'Watch streams' })),
    strictService(serviceDefinition('fencelock.v1.Semaphore'), semaphore.service),
    strictService(serviceDefinition('fencelock.v1.KV'), kv.service),
    strictService(serviceDefinition('fencelock.v1.Pipeline'), cap('Pipeline', pipeline, { Calls: 'Pipeline streams' }), { answerOnStream: answerPipelineCall }),
    strictService(serviceDefinition('fencelock.v1.Cluster'), cluster),
    strictService(serviceDefinition('fencelock.v1.Auth'), auth),
  ];
  return { services, methods: byPath(services), limits };
}

function byPath(services: ServedApi['services']): Map<string, ServedMethod> {
  const methods = new Map<string, ServedMethod>();
  for (const [definition, implementation] of services) {
    for (const [name, method] of Object.entries(definition as Record<string, grpc.MethodDefinition<unknown, unknown>>)) {
      const originalName = (method as { originalName?: string }).originalName;
      const handler = implementation[name] ?? (originalName === undefined ? undefined : implementation[originalName]);
      if (handler !== undefined) methods.set(method.path, { definition: method, handler });
    }
  }
  return methods;
}
