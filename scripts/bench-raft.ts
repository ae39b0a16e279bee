// Raw Raft throughput: three RaftDrivers in one process, real gRPC peer streams on loopback and real
// LevelDB with fsync on every batch. Prints entries committed per second at several concurrency levels.
//
//   npm run build && node dist/scripts/bench-raft.js [--seconds 5] [--size 100]
import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createLogger } from '../src/node/logger';
import { realPorts } from '../src/node/runtime/realPorts';
import { RaftDriver } from '../src/node/raftDriver';
import { encodedSnapshot, type ReplicatedApp, type SnapshotJob } from '../src/node/replicatedApp';
import { LevelStorage } from '../src/storage/levelStorage';
import { GrpcPeerTransport, PEER_SERVER_OPTIONS } from '../src/transport/grpcPeerTransport';

class CounterApp implements ReplicatedApp<number> {
  count = 0;
  apply(): number {
    return ++this.count;
  }
  captureSnapshot(): SnapshotJob {
    return encodedSnapshot(new TextEncoder().encode(String(this.count)));
  }
  restore(data: Uint8Array): void {
    this.count = Number(new TextDecoder().decode(data));
  }
  validateSnapshot(data: Uint8Array): void {
    if (!Number.isSafeInteger(Number(new TextDecoder().decode(data)))) throw new Error('not a counter snapshot');
  }
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

async function freePort(): Promise<number> {
  const server = new grpc.Server();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  return port;
}

async function main(): Promise<void> {
  const seconds = arg('seconds', 5);
  const size = arg('size', 100);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-bench-'));
  const ids = ['n1', 'n2', 'n3'];
  const ports = await Promise.all(ids.map(() => freePort()));
  const members = Object.fromEntries(ids.map((id, i) => [id, `127.0.0.1:${ports[i]}`]));
  const logger = createLogger('bench', 'warn');
  const servers: grpc.Server[] = [];
  const drivers: RaftDriver<number>[] = [];
  for (const [i, id] of ids.entries()) {
    const server = new grpc.Server(PEER_SERVER_OPTIONS);
    const transport = new GrpcPeerTransport({ selfId: id, peers: members });
    transport.register(server);
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(members[id], grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
    );
    servers.push(server);
    const storage = await LevelStorage.open(path.join(dir, id));
    drivers.push(
      await RaftDriver.start({
        raft: { id, voters: ids, electionTicks: 10, heartbeatTicks: 2, random: Math.random },
        storage,
        transport,
        app: new CounterApp(),
        tickMs: 50,
        snapshotEveryEntries: 50_000,
        logger: logger.child({ node: id }),
        ports: realPorts(),
      }),
    );
    void i;
  }
  let leader: RaftDriver<number> | undefined;
  while (!(leader = drivers.find((d) => d.isLeader()))) await new Promise((r) => setTimeout(r, 20));
  const payload = new Uint8Array(size).fill(7);
  console.log(`3 nodes, fsync on, ${size}-byte entries, ${seconds}s per row`);
  console.log('concurrency  entries/s  p50 ms  p99 ms');
  for (const concurrency of [1, 8, 64, 256]) {
    const latencies: number[] = [];
    const end = performance.now() + seconds * 1000;
    const worker = async (): Promise<void> => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await leader!.propose(payload);
        latencies.push(performance.now() - t0);
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: concurrency }, worker));
    const elapsed = (performance.now() - t0) / 1000;
    latencies.sort((a, b) => a - b);
    const pct = (p: number): string => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))].toFixed(2);
    console.log(
      `${String(concurrency).padStart(11)}  ${(latencies.length / elapsed).toFixed(0).padStart(9)}  ${pct(0.5).padStart(6)}  ${pct(0.99).padStart(6)}`,
    );
  }
  for (const d of drivers) await d.stop(0);
  for (const s of servers) s.forceShutdown();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

void main();
