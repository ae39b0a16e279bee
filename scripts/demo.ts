// `npm run demo`: brings up a fresh 3-node cluster and plays the classic fencing timeline against it.
//
// A acquires (token T) and writes; A freezes (SIGSTOP: its keepalives stop); its session expires; B acquires
// (token > T) and writes; A resumes and writes with T: refused (STALE_TOKEN); B's value is intact. Then the
// leader is killed and the new leader grants the next token, larger still.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { generateDevCerts } from '../src/certs/generate';
import { FenceLockClient, type NodeStatus } from '../src/client';

const ROOT = path.resolve(__dirname, '../..');
// The integration tests run the demo on ports and in a folder of their own.
const DIR = process.env.FENCELOCK_DEMO_DIR ?? path.join(ROOT, 'data', 'demo');
const IDS = ['n1', 'n2', 'n3'];
// Three client ports, then three peer ports.
const PORTS = (process.env.FENCELOCK_DEMO_PORTS ?? '7201,7202,7203,7211,7212,7213').split(',').map(Number);
const MEMBERS = Object.fromEntries(IDS.map((id, i) => [id, { client: `127.0.0.1:${PORTS[i]}`, peer: `127.0.0.1:${PORTS[i + 3]}` }]));
const CERTS = path.join(DIR, 'certs');
const LOCK = 'demo/invoice-run';
const KEY = 'demo/invoice-run/last-writer';

const bold = (s: string): string => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
let stepNo = 0;
const step = (s: string): void => console.log(`\n${bold(`${++stepNo}.`)} ${s}`);
const info = (s: string): void => console.log(`   ${s}`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const nodes = new Map<string, ChildProcess>();

function startNode(id: string): void {
  const configFile = path.join(DIR, `${id}.json`);
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/src/node/main.js'), '--config', configFile], {
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  nodes.set(id, child);
}

async function leader(client: FenceLockClient, exclude?: string): Promise<NodeStatus> {
  for (let i = 0; i < 200; i++) {
    const all = await client.statusAll();
    for (const s of all) {
      if (s.ok && s.status.role === 'leader' && s.status.id !== exclude) return s.status;
    }
    await sleep(100);
  }
  throw new Error('no leader elected within 20 s');
}

function lines(child: ChildProcess): AsyncIterator<string> {
  return readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
}

async function nextEvent(it: AsyncIterator<string>): Promise<Record<string, string>> {
  const { value, done } = await it.next();
  if (done) throw new Error('client A exited early');
  return JSON.parse(value as string) as Record<string, string>;
}

async function main(): Promise<void> {
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  await generateDevCerts(CERTS, { nodes: IDS });
  for (const id of IDS) {
    const tls = { ca: path.join(CERTS, 'ca.pem'), cert: path.join(CERTS, `${id}.pem`), key: path.join(CERTS, `${id}-key.pem`) };
    const config = { id, listen: MEMBERS[id]!.client, peerListen: MEMBERS[id]!.peer, members: MEMBERS, tls, dataDir: path.join(DIR, id), logLevel: 'warn' };
    writeFileSync(path.join(DIR, `${id}.json`), JSON.stringify(config, null, 2));
  }
  // The clients here and client A's process verify the nodes against the demo's CA.
  process.env.FENCELOCK_CACERT = path.join(CERTS, 'ca.pem');
  process.env.FENCELOCK_CERT = path.join(CERTS, 'client.pem');
  process.env.FENCELOCK_KEY = path.join(CERTS, 'client-key.pem');
  delete process.env.FENCELOCK_INSECURE;
  const endpoints = Object.values(MEMBERS).map((m) => m.client);

  step(`Start a 3-node cluster on ${endpoints.join(', ')} (TLS and fsync on, data in ${path.relative(ROOT, DIR) || DIR})`);
  for (const id of IDS) startNode(id);
  const client = new FenceLockClient({ endpoints, clientId: 'demo-client-b' });
  const first = await leader(client);
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
  const before = await leader(client);
  nodes.get(before.id)!.kill('SIGKILL');
  const killedAt = Date.now();
  const after = await leader(client, before.id);
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
    for (const child of nodes.values()) child.kill('SIGKILL');
    rmSync(DIR, { recursive: true, force: true });
    process.exit(exitCode);
  });
