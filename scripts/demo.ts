// `npm run demo`: brings up a fresh 3-node cluster and plays the classic fencing timeline against it.
//
// A acquires (token T) and writes; A freezes (SIGSTOP: its keepalives stop); its session expires; B acquires
// (token > T) and writes; A resumes and writes with T: refused (STALE_TOKEN); B's value is intact. Then the
// leader is killed and the new leader grants the next token, larger still.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { FenceLockClient } from '../src/client';
import { bold, info, lines, nextEvent, ROOT, startDemoCluster, step, type DemoCluster } from './demoCluster';

const LOCK = 'demo/invoice-run';
const KEY = 'demo/invoice-run/last-writer';

let cluster: DemoCluster | undefined;

async function main(): Promise<void> {
  // The integration tests run the demo on ports and in a folder of their own (FENCELOCK_DEMO_DIR/_PORTS).
  // The clients here and client A's process verify the nodes against the demo's CA.
  const c = (cluster = await startDemoCluster(path.join(ROOT, 'data', 'demo'), '7201,7202,7203,7211,7212,7213'));
  const endpoints = c.endpoints;
  step(`Start a 3-node cluster on ${endpoints.join(', ')} (TLS and fsync on, data in ${path.relative(ROOT, c.dir) || c.dir})`);
  const client = new FenceLockClient({ endpoints, clientId: 'demo-client-b' });
  const first = await c.leader(client);
  info(`leader: ${first.id} (term ${first.term})`);

  step('Client A opens a session (TTL 3 s), acquires the lock and writes');
  const a = spawn(process.execPath, [path.join(ROOT, 'dist/scripts/demo-holder.js'), endpoints.join(','), LOCK, KEY], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const aEvents = lines(a);
  const acquired = await nextEvent(aEvents);
  if (acquired.event !== 'acquired') throw new Error(`client A: ${JSON.stringify(acquired)}`);
  const tokenA = BigInt(acquired.token);
  info(`A holds "${LOCK}" with fencing token ${bold(String(tokenA))}`);
  await nextEvent(aEvents);
  info(`A wrote "${KEY}" with token ${tokenA}: accepted`);

  step('A freezes (SIGSTOP, like a long GC pause or a VM freeze): its keepalives stop');
  a.kill('SIGSTOP');
  const frozenAt = Date.now();

  step('Client B asks for the same lock and waits in the FIFO queue');
  const sessionB = await client.openSession({ ttlMs: 10_000, name: 'client B' });
  const lockB = await sessionB.acquire(LOCK, { waitTimeoutMs: 20_000 });
  info(`A's session expired on the leader after ${((Date.now() - frozenAt) / 1000).toFixed(1)} s; the lock went to B`);
  info(`B holds "${LOCK}" with fencing token ${bold(String(lockB.token))} (> ${tokenA})`);
  await lockB.write([{ put: KEY, value: `written by B with token ${lockB.token}` }]);
  info(`B wrote "${KEY}" with token ${lockB.token}: accepted`);

  step('A wakes up (SIGCONT) and, not knowing it was frozen, writes with its old token');
  a.kill('SIGCONT');
  a.stdin!.write('write\n');
  const refused = await nextEvent(aEvents);
  if (refused.event === 'write-refused') {
    info(`A's write with token ${tokenA}: ${bold(`REFUSED ${refused.code} ${refused.reason}`)} (watermark ${refused.watermark})`);
  } else {
    throw new Error(`SAFETY VIOLATION: A's stale write was ${JSON.stringify(refused)}`);
  }
  const value = await client.get(KEY);
  info(`"${KEY}" = "${new TextDecoder().decode(value.value)}" (token ${value.token}): B's write is intact`);

  step('Kill the leader (SIGKILL) and let the cluster elect another');
  const before = await c.leader(client);
  c.kill(before.id);
  const killedAt = Date.now();
  const after = await c.leader(client, before.id);
  info(`${before.id} killed; ${after.id} leads term ${after.term} after ${Date.now() - killedAt} ms`);

  step('B releases; client C acquires through the new leader');
  await lockB.release();
  const sessionC = await client.openSession({ ttlMs: 10_000, name: 'client C' });
  const lockC = await sessionC.acquire(LOCK, { waitTimeoutMs: 10_000 });
  info(`C holds "${LOCK}" with fencing token ${bold(String(lockC.token))} (> ${lockB.token} > ${tokenA}): tokens never go back`);
  await lockC.release();
  await sessionB.close();
  await sessionC.close();
  await client.close();
  console.log(`\n${bold('Done:')} the stale holder was refused by the resource itself, and tokens kept increasing across a failover.`);
}

let exitCode = 0;
main()
  .catch((err: Error) => {
    console.error(`demo failed: ${err.stack ?? err.message}`);
    exitCode = 1;
  })
  .finally(() => {
    cluster?.destroy();
    process.exit(exitCode);
  });
