// Client A of the demo: takes the lock, writes once, then waits for "write" on stdin and writes again with
// its old token, as a process that was frozen mid-work would. Prints one JSON line per event.
import * as readline from 'node:readline';
import { FenceLockClient, isFenceLockError } from '../src/client';

const say = (o: object): void => void process.stdout.write(JSON.stringify(o) + '\n');

async function main(): Promise<void> {
  const [endpoints, lock, key] = process.argv.slice(2);
  const client = new FenceLockClient({ endpoints: endpoints.split(','), clientId: 'demo-client-a' });
  const session = await client.openSession({ ttlMs: 3_000, name: 'client A' });
  const handle = await session.acquire(lock, { waitTimeoutMs: 10_000 });
  say({ event: 'acquired', token: String(handle.token) });
  await handle.write([{ put: key, value: `written by A with token ${handle.token}` }]);
  say({ event: 'wrote', token: String(handle.token) });
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line.trim() !== 'write') continue;
    // A frozen process does not know it was frozen: it goes on with the token it has.
    try {
      await client.write({ lock, token: handle.token, sessionId: session.id, ops: [{ put: key, value: 'A overwrites after its pause' }] });
      say({ event: 'write-accepted', token: String(handle.token) });
    } catch (err) {
      if (!isFenceLockError(err)) throw err;
      say({ event: 'write-refused', code: err.code, reason: err.reason, watermark: String(err.watermark ?? ''), message: err.message });
    }
    break;
  }
  lines.close();
  await client.close();
  process.exit(0);
}

main().catch((err: Error) => {
  say({ event: 'error', message: err.message });
  process.exit(1);
});
