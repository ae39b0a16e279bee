// The client's method table (src/client/proto.ts) is read off lock.proto: every unary and streaming method
// of every service, by its generated name, with no hand-written entry (issue 31).
import * as protobuf from 'protobufjs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { methods, type ServiceKey } from '../../src/client/proto';
import { findProtoRoot } from '../../src/client/protoPath';

/** Service -> method names, as protobufjs reads lock.proto (a second reader, not the grpc loader). */
function lockProto(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.join(findProtoRoot(), 'proto', target);
  return root.loadSync('fencelock/v1/lock.proto');
}

function protoMethods(): Map<string, string[]> {
  const v1 = lockProto().lookup('fencelock.v1') as protobuf.Namespace;
  const out = new Map<string, string[]>();
  for (const s of v1.nestedArray) if (s instanceof protobuf.Service) out.set(s.name, Object.keys(s.methods).sort());
  return out;
}

describe('the client method table', () => {
  it('has every method of every service in lock.proto, at its gRPC path', () => {
    const table = methods() as unknown as Record<ServiceKey, Record<string, { path: string; serialize: unknown }>>;
    const services = protoMethods();
    expect(services.size).toBeGreaterThan(4);
    for (const [service, names] of services) {
      const own = table[service as ServiceKey];
      expect(Object.keys(own).sort(), service).toEqual(names);
      for (const m of names) expect(own[m]!.path).toBe(`/fencelock.v1.${service}/${m}`);
    }
  });

  it('has only the services, by their generated names (no legacy aliases), and the Pipeline routes on the hot calls', () => {
    const m = methods();
    expect(Object.keys(m).sort()).toEqual([...protoMethods().keys()].sort());
    const routes = Object.entries(m).flatMap(([service, calls]) =>
      Object.entries(calls as Record<string, { pipeline?: { kind: string } }>).flatMap(([name, d]) => (d.pipeline ? [`${service}.${name}:${d.pipeline.kind}`] : [])),
    );
    expect(routes.sort()).toEqual(['KV.Get:get', 'KV.Write:write', 'Lock.Acquire:acquire', 'Lock.Release:release', 'Semaphore.Acquire:semaphoreAcquire', 'Semaphore.Release:semaphoreRelease']);
  });

  it("sends the method's own request message", () => {
    const bytes = methods().Lock.Describe.serialize({ lock: 'orders' });
    const type = lockProto().lookupType('fencelock.v1.DescribeRequest');
    expect(type.toObject(type.decode(bytes))).toEqual({ lock: 'orders' });
  });
});
