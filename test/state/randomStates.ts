// Seeded random states of the lock state machine, reached by random commands (no vitest here: a script can
// run it against another build of the machine to compare snapshot bytes).
import type { Command, LockStateMachine, WriteOp } from '../../src/state';
import { mulberry32 } from '../support/prng';

const LOCKS = ['a', 'b', 'c', 'é', 'lock/\u{1F600}', 'x'.repeat(60)];
const KEYS = ['k', 'k2', 'ü/1', 'long/' + 'y'.repeat(50)];
const CLIENTS = ['', 'alpha', 'beta', 'ç-client'];
const NAMES = ['', 'w', 'ü', 'name-'.repeat(10)];

/**
 * Applies `steps` random commands to `m` (indexes from m.lastApplied + 1, with gaps), among 8 session ids
 * chosen by `sessionSeed` (calls with the same one work on the same sessions).
 */
export function driveRandomly(m: LockStateMachine, seed: number, steps: number, sessionSeed = seed): void {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const sessions = Array.from({ length: 8 }, (_, i) => (sessionSeed * 131 + i).toString(16).padStart(32, '0'));
  // Timestamps above 2^31 take the writer's long varint path.
  let now = rnd() < 0.5 ? 1_000 : 1_700_000_000_000;
  let index = m.lastApplied;
  const requestIds = new Map<string, number>();
  const history: Command[] = [];
  for (let step = 0; step < steps; step++) {
    index += rnd() < 0.1 ? 2 : 1;
    now += Math.floor(rnd() * 100);
    const clientId = pick(CLIENTS);
    const requestId = (requestIds.get(clientId) ?? 0) + 1;
    requestIds.set(clientId, requestId);
    const meta = { clientId, requestId: clientId === '' ? 0 : requestId, now };
    const lock = pick(LOCKS);
    const holder = m.describeLock(lock)?.holder;
    const sessionId = holder && rnd() < 0.5 ? holder.sessionId : pick(sessions);
    const token = holder && rnd() < 0.7 ? holder.token : 1 + Math.floor(rnd() * index);
    const r = rnd();
    let c: Command;
    if (r < 0.05 && history.length > 0) c = pick(history); // a retry
    else if (r < 0.2) c = { type: 'OpenSession', ...meta, sessionId, ttlMs: 5_000 + Math.floor(rnd() * 1e6), clientName: pick(NAMES) };
    else if (r < 0.25) c = { type: 'CloseSession', ...meta, sessionId };
    else if (r < 0.3) c = { type: 'ExpireSession', now, sessionIds: [sessionId] };
    else if (r < 0.5) c = { type: 'Acquire', ...meta, lock, sessionId, tryOnly: rnd() < 0.3 };
    else if (r < 0.55) c = { type: 'CancelWait', ...meta, lock, sessionId };
    else if (r < 0.68) c = { type: 'Release', ...meta, lock, sessionId, token };
    else if (r < 0.97) {
      const ops: WriteOp[] = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () =>
        rnd() < 0.8 ? { type: 'put', key: pick(KEYS), value: Uint8Array.of(Math.floor(rnd() * 256), 7) } : { type: 'delete', key: pick(KEYS) },
      );
      c = { type: 'Write', ...meta, lock, sessionId, token, ops };
    } else c = { type: 'Acquire', ...meta, lock: '', sessionId, tryOnly: false }; // invalid, stored as such
    history.push(c);
    m.apply(index, c);
  }
}
