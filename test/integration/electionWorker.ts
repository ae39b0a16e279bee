// A campaigner in a process of its own (compiled to dist/test/integration/electionWorker.js), so that a test
// can SIGKILL a leader (its session expires on the cluster) or SIGSTOP it past its TTL (a deposed leader that
// wakes up and acts on its old token).
//
//   node dist/test/integration/electionWorker.js '<json {endpoints, election, id, ttlMs}>'
//
// It campaigns with its id as value, then obeys one line at a time on stdin, answering with a JSON line:
//   -> {"k":"leader","token":"12"}                  it leads (campaign returned)
//   write    -> {"k":"wrote","token","index"} | {"k":"refused","token","code","reason"}
//               a fenced write of key <election>/work = "<id>:<token>" through client.write (not through the
//               Leadership, so that only the cluster decides, never this client's own loss guard)
//   proclaim -> {"k":"proclaimed","token"} | {"k":"refused",...}: Leadership.proclaim("<id>-again")
//   resign   -> {"k":"resigned","token"}, then it campaigns again
import * as readline from 'node:readline';
import { FenceLockClient, isFenceLockError, type Leadership } from '../../src/client';

interface WorkerConfig {
  endpoints: string[];
  election: string;
  id: string;
  ttlMs: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
const client = new FenceLockClient({ endpoints: config.endpoints, clientId: `${config.id}-${process.pid}` });
const say = (o: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(o, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}\n`);
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

function refused(token: bigint, err: unknown): Record<string, unknown> {
  if (!isFenceLockError(err)) throw err;
  return { k: 'refused', token, code: err.code, reason: err.reason ?? '' };
}

async function serve(leadership: Leadership): Promise<void> {
  const { token } = leadership;
  for (;;) {
    const line = await lines.next();
    if (line.done) process.exit(0);
    const command = line.value.trim();
    if (command === 'write') {
      const work = { lock: config.election, token, sessionId: leadership.lock.session.id, ops: [{ put: `${config.election}/work`, value: `${config.id}:${token}` }] };
      say(await client.write(work).then((r) => ({ k: 'wrote', token, index: r.index }), (err: unknown) => refused(token, err)));
    } else if (command === 'proclaim') {
      say(await leadership.proclaim(`${config.id}-again`).then(() => ({ k: 'proclaimed', token }), (err: unknown) => refused(token, err)));
    } else if (command === 'resign') {
      await leadership.resign().catch(() => undefined); // a deposed leader's session is gone already
      say({ k: 'resigned', token });
      return;
    }
  }
}

async function main(): Promise<void> {
  const election = client.election(config.election, { ttlMs: config.ttlMs });
  say({ k: 'ready', pid: process.pid });
  for (;;) {
    let leadership: Leadership;
    try {
      leadership = await election.campaign(config.id);
    } catch (err) {
      say({ k: 'campaign-failed', message: (err as Error).message });
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    say({ k: 'leader', token: leadership.token });
    await serve(leadership);
  }
}

void main();
