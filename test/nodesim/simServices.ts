/**
 * A simulated node's client API: the served API of src/node/api/servedMethods.ts (what the gRPC listener and
 * the HTTP gateway serve), by method path. Per-connection stream caps are left out: the simulation's few
 * clients never reach them.
 */
import { serveApi, type ServedMethod } from '../../src/node/api/servedMethods';
import type { NodeRuntime } from '../../src/node/runtime/nodeRuntime';

export type { ServedMethod };

const served = new WeakMap<NodeRuntime, Map<string, ServedMethod>>();

/** The methods a runtime serves, built once per runtime (one incarnation of a node). */
export function servedMethods(runtime: NodeRuntime): Map<string, ServedMethod> {
  let methods = served.get(runtime);
  if (!methods) {
    methods = serveApi(runtime, { capped: false }).methods;
    served.set(runtime, methods);
  }
  return methods;
}
