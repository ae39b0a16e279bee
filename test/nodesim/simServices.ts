/**
 * A simulated node's client API: the same service implementations src/node/server.ts registers with its gRPC
 * server (the runtime's services, the Pipeline over the lock and KV calls, each wrapped by strictService for
 * strict decoding), by method path, with the definitions that (de)serialize their messages. Per-connection
 * stream caps (capStreams) are left out: the simulation's few clients never reach them.
 */
import type * as grpc from '@grpc/grpc-js';
import { serviceDefinition } from '../../src/client/proto';
import { ConnectionLimits, CONNECTION_CAPS } from '../../src/node/api/connectionLimits';
import { pipelineService } from '../../src/node/api/pipelineService';
import { answerPipelineCall, strictService } from '../../src/node/api/strictService';
import type { NodeRuntime } from '../../src/node/runtime/nodeRuntime';

export interface ServedMethod {
  definition: grpc.MethodDefinition<unknown, unknown>;
  handler: grpc.UntypedHandleCall;
}

const served = new WeakMap<NodeRuntime, Map<string, ServedMethod>>();

/** The methods a runtime serves, built once per runtime (one incarnation of a node). */
export function servedMethods(runtime: NodeRuntime): Map<string, ServedMethod> {
  let methods = served.get(runtime);
  if (!methods) {
    methods = build(runtime);
    served.set(runtime, methods);
  }
  return methods;
}

function build(runtime: NodeRuntime): Map<string, ServedMethod> {
  const { session, lock, kv, cluster, auth } = runtime.services;
  const ctx = runtime.context;
  const limits = new ConnectionLimits(CONNECTION_CAPS, (identity, quota) => runtime.app.machine.auth.quotaOf(identity, quota));
  const pipeline = pipelineService(ctx.logger, { ...lock.calls, ...kv.calls }, {
    limits,
    identify: (call) => ctx.access.callerOf(call),
    metrics: runtime.metrics.api,
    watchRights: (caller, onLost) => ctx.rights.watch(caller, onLost),
    timers: ctx.ports.timers,
  });
  const services: Array<[grpc.ServiceDefinition, grpc.UntypedServiceImplementation]> = [
    strictService(serviceDefinition('fencelock.v1.Session'), session.service),
    strictService(serviceDefinition('fencelock.v1.Lock'), lock.service),
    strictService(serviceDefinition('fencelock.v1.KV'), kv.service),
    strictService(serviceDefinition('fencelock.v1.Pipeline'), pipeline, { answerOnStream: answerPipelineCall }),
    strictService(serviceDefinition('fencelock.v1.Cluster'), cluster),
    strictService(serviceDefinition('fencelock.v1.Auth'), auth),
  ];
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
