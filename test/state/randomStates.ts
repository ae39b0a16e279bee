// Seeded random states of the lock state machine, reached by random commands (no vitest here: a script can
// run it against another build of the machine to compare snapshot bytes).
import { AUTH_RULES_CLOSED_WHEN_OFF, type AuthChange, type Command, type LockStateMachine, type WriteOp } from '../../src/state';
import { mulberry32 } from '../support/prng';

const LOCKS = ['a', 'b', 'c', 'é', 'lock/\u{1F600}', 'x'.repeat(60)];
const KEYS = ['k', 'k2', 'ü/1', 'long/' + 'y'.repeat(50)];
const CLIENTS = ['', 'alpha', 'beta', 'ç-client'];
const NAMES = ['', 'w', 'ü', 'name-'.repeat(10)];
/** With `auth`: the identities requests come from ('' = the node), users, roles and tokens; and key moves. */
const CALLERS = ['', 'alice', 'bob', 'address:10.0.0.1'];
const USERS = ['alice', 'bob', 'carol'];
const ROLES = ['r1', 'r2', 'root'];
const PREFIXES = ['', 'a', 'k', 'lock/', 'ü'];
const TOKENS = ['00000000000000a1', '00000000000000b2', '00000000000000c3'];
const QUOTAS = ['sessions', 'locks', 'waiters', 'keys', 'store_bytes', 'dedup_clients'] as const;

export interface DriveOptions {
  /** Also callers, tokens and auth changes (more random draws: other states than without). */
  auth?: boolean;
}

/**
 * A random auth change among a few users, roles and tokens (many refused: that is covered too); about a quarter
 * under the current rules (version 1: nothing while auth is off, enable afresh), the rest as an older log's.
 * The version comes from the same draw, so the random stream is what it was before versions existed.
 */
function randomAuthChange(rnd: () => number, pick: <T>(xs: readonly T[]) => T): AuthChange {
  const r = rnd();
  const change = randomAuthChangeOf(r, rnd, pick);
  return Math.floor(r * 1e6) % 4 === 1 ? { ...change, version: AUTH_RULES_CLOSED_WHEN_OFF } : change;
}

function randomAuthChangeOf(r: number, rnd: () => number, pick: <T>(xs: readonly T[]) => T): AuthChange {
  const user = pick(USERS);
  const role = pick(ROLES);
  if (r < 0.08) return { op: 'enable', user };
  if (r < 0.2) return { op: 'user_add', user };
  if (r < 0.25) return { op: 'user_delete', user };
  if (r < 0.4) return { op: 'user_grant', user, role };
  if (r < 0.45) return { op: 'user_revoke', user, role };
  if (r < 0.5) return { op: 'role_add', role };
  if (r < 0.53) return { op: 'role_delete', role };
  if (r < 0.68) return { op: 'role_grant', role, perm: pick(['lock', 'write', 'read', 'admin'] as const), prefix: rnd() < 0.5 ? '' : pick(PREFIXES) };
  if (r < 0.72) return { op: 'role_revoke', role, perm: pick(['lock', 'write', 'read', 'admin'] as const), prefix: '' };
  if (r < 0.82) return { op: 'role_quota', role, quota: pick(QUOTAS), ...(rnd() < 0.8 ? { value: Math.floor(rnd() * 6) } : {}) };
  if (r < 0.94) return { op: 'token_issue', user, tokenId: pick(TOKENS), tokenHash: 'ab'.repeat(32) };
  return { op: 'token_revoke', tokenId: pick(TOKENS) };
}

/**
 * Applies `steps` random commands to `m` (indexes from m.lastApplied + 1, with gaps), among 8 session ids
 * chosen by `sessionSeed` (calls with the same one work on the same sessions).
 */
export function driveRandomly(m: LockStateMachine, seed: number, steps: number, sessionSeed = seed, options: DriveOptions = {}): void {
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
    let meta: { clientId: string; requestId: number; now: number; caller?: string; callerToken?: string } = { clientId, requestId: clientId === '' ? 0 : requestId, now };
    if (options.auth === true) {
      // Retry records are per (caller, client id): each pair numbers its requests from 1.
      const caller = pick(CALLERS);
      const pair = `${caller}\u0000${clientId}`;
      const pairRequestId = (requestIds.get(pair) ?? 0) + 1;
      requestIds.set(pair, pairRequestId);
      meta = { clientId, requestId: clientId === '' ? 0 : pairRequestId, now, caller, ...(rnd() < 0.2 ? { callerToken: pick(TOKENS) } : {}) };
      const r = rnd();
      if (r < 0.2) {
        const c: Command =
          r < 0.15
            ? { type: 'AuthChange', ...meta, change: randomAuthChange(rnd, pick) }
            : { type: 'MoveKeys', ...meta, ...(rnd() < 0.5 ? { key: pick(KEYS) } : { prefix: pick(PREFIXES) }), toLock: pick(LOCKS) };
        history.push(c);
        m.apply(index, c);
        continue;
      }
    }
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
