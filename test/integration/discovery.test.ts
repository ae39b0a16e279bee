// What grpcurl needs from any node: the standard health service and server reflection.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, LocalCluster, testCredentials } from './harness';
import { listServices } from './reflection';

const healthProto = healthProtoPath;
const loaded = grpc.loadPackageDefinition(protoLoader.loadSync([healthProto], { keepCase: true, defaults: true, enums: String })) as unknown as {
  grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } };
};

// Nodes may still be starting: retry connecting quickly rather than with grpc's default backoff of seconds.
const FAST_RECONNECT = { 'grpc.initial_reconnect_backoff_ms': 100, 'grpc.max_reconnect_backoff_ms': 500 };

let cluster: LocalCluster;

beforeAll(async () => {
  cluster = await LocalCluster.create();
  cluster.startAll();
});

afterAll(async () => {
  await cluster?.destroy();
});

describe('grpcurl support on every node', () => {
  it('the health service answers SERVING, and the lock service is SERVING once a leader is known', async () => {
    for (const address of cluster.endpoints) {
      const health = new loaded.grpc.health.v1.Health(address, testCredentials(), FAST_RECONNECT) as unknown as {
        Check(req: object, opts: object, cb: (err: grpc.ServiceError | null, res: { status: string }) => void): void;
        close(): void;
      };
      const check = (service: string): Promise<string> =>
        new Promise((resolve, reject) =>
          health.Check({ service }, { deadline: Date.now() + 2_000 }, (err, res) => (err ? reject(err) : resolve(res.status))),
        );
      await eventually(async () => ((await check('')) === 'SERVING' ? true : undefined), 15_000, `${address} health`);
      await eventually(async () => ((await check('fencelock.v1.Lock')) === 'SERVING' ? true : undefined), 15_000, `${address} lock service health`);
      health.close();
    }
  });

  it('server reflection lists the fencelock services', async () => {
    const address = cluster.endpoints[0];
    await eventually(async () => {
      const names = await listServices(address, FAST_RECONNECT);
      return names.length > 0 ? names : undefined;
    }, 15_000, 'reflection').then((names) => {
      expect(names).toEqual(expect.arrayContaining(['fencelock.v1.Session', 'fencelock.v1.Lock', 'fencelock.v1.KV', 'fencelock.v1.Cluster', 'grpc.health.v1.Health']));
    });
  });
});
