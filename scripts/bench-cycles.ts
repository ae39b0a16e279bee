// Lock cycles against a fresh local 3-node cluster (fsync on, default config): each cycle is
// acquire -> fenced write -> release through the TypeScript client. Prints cycles/s and latency.
//
//   npm run build && node dist/scripts/bench-cycles.js [--seconds 5] [--clients 1,8,64]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { FenceLockClient } from '../src/client';

const ROOT = path.resolve(__dirname, '../..');

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

async function startCluster(dir: string): Promise<{ endpoints: string[]; children: ChildProcess[] }> {
  const ids = ['n1', 'n2', 'n3'];
  const ports: number[] = [];
  for (const _ of ids) ports.push(await freePort());
  const members = Object.fromEntries(ids.map((id, i) => [id, `127.0.0.1:${ports[i]}`]));
  const children = ids.map((id) => {
    const file = path.join(dir, `${id}.json`);
    writeFileSync(file, JSON.stringify({ id, listen: members[id], members, dataDir: path.join(dir, id), logLevel: 'warn' }));
    return spawn(process.execPath, [path.join(ROOT, 'dist/src/node/main.js'), '--config', file], { stdio: 'ignore' });
  });
  return { endpoints: Object.values(members), children };
}

interface Row {
  workload: string;
  clients: number;
  opsPerSec: number;
  p50: number;
  p99: number;
}

async function runWorkload(endpoints: string[], clients: number, hot: boolean, seconds: number): Promise<Row> {
  const pool = await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      const client = new FenceLockClient({ endpoints });
      const session = await client.openSession({ ttlMs: 10_000, name: `bench-${i}` });
      return { client, session, lock: hot ? 'bench/hot' : `bench/lock-${i}` };
    }),
  );
  const latencies: number[] = [];
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    pool.map(async ({ session, lock }, i) => {
      let n = 0;
      while (performance.now() < end) {
        const start = performance.now();
        const handle = await session.acquire(lock, { waitTimeoutMs: 30_000 });
        await handle.write([{ put: `${lock}/value`, value: `client ${i} cycle ${n++}` }]);
        await handle.release();
        latencies.push(performance.now() - start);
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  await Promise.all(pool.map(({ client }) => client.close()));
  latencies.sort((a, b) => a - b);
  const pct = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN;
  return { workload: hot ? 'one hot lock' : 'distinct locks', clients, opsPerSec: latencies.length / elapsed, p50: pct(0.5), p99: pct(0.99) };
}

async function main(): Promise<void> {
  const seconds = Number(arg('seconds', '5'));
  const clientCounts = arg('clients', '1,8,64').split(',').map(Number);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-bench-'));
  const { endpoints, children } = await startCluster(dir);
  try {
    const probe = new FenceLockClient({ endpoints });
    for (let i = 0; i < 100; i++) {
      if ((await probe.statusAll()).some((s) => s.ok && s.status.role === 'leader')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await probe.close();
    console.log(`lock cycles (acquire -> fenced write -> release), 3 nodes, fsync on, ${seconds} s per row`);
    console.log('workload         clients   cycles/s   p50 ms   p99 ms');
    for (const hot of [false, true]) {
      for (const clients of clientCounts) {
        const r = await runWorkload(endpoints, clients, hot, seconds);
        console.log(
          `${r.workload.padEnd(15)}  ${String(r.clients).padStart(7)}  ${r.opsPerSec.toFixed(0).padStart(9)}  ${r.p50.toFixed(2).padStart(7)}  ${r.p99.toFixed(2).padStart(7)}`,
        );
      }
    }
  } finally {
    for (const c of children) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    console.error(err);
    process.exit(1);
  },
);
