// A lock holder in a process of its own (compiled to dist/test/integration/revokeHolderWorker.js), so that a
// test can SIGSTOP it while an admin revokes its grant (lockRevoke.test.ts):
//
//   node dist/test/integration/revokeHolderWorker.js '<endpoints, comma-separated>' '<lock>'
//
// It prints JSON lines: {"k":"holding","token":..} once granted; {"k":"lost","reason":..} when its client
// learns the grant is over (LockHandle.onLost); {"k":"write","reason":..} for "write" on stdin (a fenced write
// under the old token through client.write, so that the server, not the library's guard, decides);
// {"k":"reacquired","token":..} for "reacquire" (a try-acquire on the same session). "stop" ends it.
import * as readline from 'node:readline';
import { FenceLockClient, isFenceLockError } from '../../src/client';

async function main(): Promise<void> {
  const [endpoints = '', lock = ''] = process.argv.slice(2);
  const say = (line: object): void => void process.stdout.write(`${JSON.stringify(line)}\n`);
  const client = new FenceLockClient({ endpoints: endpoints.split(',') });
  const session = await client.openSession({ ttlMs: 8_000, name: 'revoke-holder' });
  const handle = await session.acquire(lock);
  handle.onLost((err) => say({ k: 'lost', reason: err.reason ?? '' }));
  say({ k: 'holding', token: handle.token.toString() });
  for await (const line of readline.createInterface({ input: process.stdin })) {
    if (line === 'write') {
      try {
        await client.write({ lock, token: handle.token, sessionId: session.id, ops: [{ put: `${lock}/k`, value: 'late' }] });
        say({ k: 'write', reason: 'accepted' });
      } catch (err) {
        say({ k: 'write', reason: isFenceLockError(err) ? (err.reason ?? err.code) : String(err) });
      }
    } else if (line === 'reacquire') {
      const again = await session.tryAcquire(lock);
      say({ k: 'reacquired', token: again === null ? '' : again.token.toString() });
    } else if (line === 'stop') break;
  }
  await session.close().catch(() => undefined);
  await client.close();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
