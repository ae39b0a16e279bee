// The states of the snapshot fixtures (test/state/fixtures/): machines holding every kind of stored result
// the state machine keeps for a retry, with sessions, held and awaited locks, keys (tombstones included)
// and auth tables. writeFixtures.ts wrote their snapshots and observations with the code of the time;
// snapshotFixtures.test.ts reads those files back with today's code. No vitest here: the writer runs as a
// plain script.
import { LockStateMachine, type AuthChange, type Command, type Result, type WriteOp } from '../../src/state';

type RequestType = Exclude<Command['type'], 'ExpireSession' | 'CheckpointLeases'>;
type Body<T extends RequestType> = Omit<Extract<Command, { type: T }>, 'type' | 'clientId' | 'requestId' | 'now' | 'caller'>;

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const put = (key: string, value: string): WriteOp => ({ type: 'put', key, value: enc(value) });
const del = (key: string): WriteOp => ({ type: 'delete', key });
const sid = (n: number): string => n.toString(16).padStart(32, '0');

/** Applies numbered, timestamped requests and remembers each (for the retries of the fixture test). */
class Builder {
  readonly m = new LockStateMachine();
  readonly requests: Command[] = [];
  private index = 0;
  private now = 5_000_000;
  private readonly nextId = new Map<string, number>();
  private nextSession = 1;

  /** A request of `caller` ('' = none) from its client `client`, numbered per (caller, client) from 1. */
  req<T extends RequestType>(caller: string, client: string, type: T, body: Body<T>): Result {
    const key = `${caller}\u0000${client}`;
    const requestId = (this.nextId.get(key) ?? 0) + 1;
    this.nextId.set(key, requestId);
    const command = { type, clientId: client, requestId, now: (this.now += 10), ...(caller === '' ? {} : { caller }), ...body } as unknown as Command;
    this.requests.push(command);
    return this.m.apply(++this.index, command).result;
  }

  open(caller: string, client: string, ttlMs = 30_000): string {
    const sessionId = sid(this.nextSession++);
    this.req(caller, client, 'OpenSession', { sessionId, ttlMs, clientName: `${client}-name` });
    return sessionId;
  }

  /** A node-internal command (not de-duplicated). */
  internal(command: Command): void {
    this.m.apply(++this.index, command);
  }

  token(r: Result): number {
    if (r.status !== 'granted') throw new Error(`expected a grant, got ${JSON.stringify(r)}`);
    return r.token;
  }
}

/** Sessions, locks, waiters, keys and every result of the lock and key commands (auth off). */
function locksState(): Builder {
  const b = new Builder();
  const c = 'client-a';
  const [s1, s2, s3, s4] = [b.open('', c), b.open('', c, 12_345), b.open('', 'client-b'), b.open('', 'client-b')];
  const t1 = b.token(b.req('', c, 'Acquire', { lock: 'orders', sessionId: s1, tryOnly: false, waitTimeoutMs: 5_000 }));
  b.req('', c, 'Acquire', { lock: 'orders', sessionId: s1, tryOnly: false }); // granted, re-entrant
  b.req('', c, 'Acquire', { lock: 'orders', sessionId: s2, tryOnly: false, waitTimeoutMs: 5_000 }); // waiting 1
  b.req('', 'client-b', 'Acquire', { lock: 'orders', sessionId: s3, tryOnly: false, waitTimeoutMs: 5_000 }); // waiting 2
  b.req('', 'client-b', 'Acquire', { lock: 'orders', sessionId: s4, tryOnly: true }); // held
  b.req('', 'client-b', 'CancelWait', { lock: 'orders', sessionId: s3 }); // cancelled
  b.req('', 'client-b', 'CancelWait', { lock: 'orders', sessionId: s3 }); // not_waiting
  b.req('', c, 'Write', { lock: 'orders', sessionId: s1, token: t1, ops: [put('orders/1', 'one'), put('orders/2', 'twö'), put('orders/3', 'three')] });
  b.req('', c, 'Write', { lock: 'orders', sessionId: s1, token: t1, ops: [del('orders/3')] }); // a tombstone
  b.req('', c, 'Release', { lock: 'orders', sessionId: s1, token: t1 + 1 }); // WRONG_TOKEN
  b.req('', c, 'Release', { lock: 'orders', sessionId: s4, token: t1 }); // NOT_HOLDER
  b.req('', c, 'Release', { lock: 'orders', sessionId: s1, token: t1 }); // released, handed over to s2
  const t2 = b.m.describeLock('orders')?.holder?.token ?? 0;
  b.req('', c, 'Write', { lock: 'orders', sessionId: s1, token: t1, ops: [put('orders/1', 'late')] }); // STALE_TOKEN
  const t3 = b.token(b.req('', 'client-b', 'Acquire', { lock: 'stock', sessionId: s4, tryOnly: false }));
  b.req('', 'client-b', 'Write', { lock: 'stock', sessionId: s4, token: t3, ops: [put('orders/2', 'x')] }); // WRONG_LOCK, key and owner
  b.req('', 'client-b', 'Write', { lock: 'stock', sessionId: s4, token: t3, ops: [put('stock/ü/🔒', 'many')] });
  b.req('', 'client-b', 'Release', { lock: 'stock', sessionId: s4, token: t3 }); // released, lock free (kept by its key)
  b.req('', c, 'Write', { lock: 'stock', sessionId: s4, token: t3, ops: [put('stock/a', 'a')] }); // LOCK_NOT_HELD
  b.req('', c, 'Acquire', { lock: 'orders', sessionId: sid(999), tryOnly: false }); // UNKNOWN_SESSION
  b.req('', c, 'Acquire', { lock: '', sessionId: s1, tryOnly: false }); // invalid
  b.req('', c, 'MoveKeys', { prefix: 'orders/', toLock: 'archive' }); // keys_moved
  b.req('', c, 'MoveKeys', { key: 'stock/ü/🔒', toLock: 'archive' });
  b.req('', c, 'Write', { lock: 'orders', sessionId: s2, token: t2, ops: [put('orders/9', 'nine')] });
  b.req('', c, 'CloseSession', { sessionId: s1 }); // session_ended closed, nothing held
  b.req('', 'client-b', 'Acquire', { lock: 'queue', sessionId: s3, tryOnly: false });
  b.req('', 'client-b', 'Acquire', { lock: 'queue', sessionId: s4, tryOnly: false });
  b.req('', 'client-b', 'Acquire', { lock: 'queue', sessionId: s2, tryOnly: false });
  b.req('', 'client-b', 'Acquire', { lock: 'held-by-3', sessionId: s3, tryOnly: false });
  b.req('', 'client-b', 'CloseSession', { sessionId: s3 }); // session_ended closed, released two locks
  b.req('', c, 'OpenSession', { sessionId: s2, ttlMs: 5_000, clientName: 'again' }); // SESSION_EXISTS
  b.internal({ type: 'CheckpointLeases', now: 5_999_000, leases: [{ sessionId: s2, remainingMs: 7_000 }] });
  b.internal({ type: 'ExpireSession', now: 5_999_100, sessionIds: [sid(998)] });
  return b;
}

/** Auth on: users, roles, rules, quotas, tokens, owned sessions, and the results naming a subject. */
function authState(): Builder {
  const b = new Builder();
  const admin = 'root-admin';
  const change = (caller: string, c: AuthChange): Result => b.req(caller, 'admin-cli', 'AuthChange', { change: c });
  change('', { op: 'enable', user: admin });
  for (const c of [
    { op: 'role_add', role: 'app' },
    { op: 'role_grant', role: 'app', perm: 'lock', prefix: 'app/' },
    { op: 'role_grant', role: 'app', perm: 'write', prefix: 'app/' },
    { op: 'role_grant', role: 'app', perm: 'read', prefix: '' },
    { op: 'role_quota', role: 'app', quota: 'keys', value: 2 },
    { op: 'user_add', user: 'alice' },
    { op: 'user_grant', user: 'alice', role: 'app' },
    { op: 'user_add', user: 'bob' },
    { op: 'user_grant', user: 'bob', role: 'app' },
    { op: 'user_add', user: 'alice' }, // USER_EXISTS
    { op: 'user_grant', user: 'bob', role: 'nothing' }, // UNKNOWN_ROLE
    { op: 'token_issue', user: 'alice', tokenId: '0123456789abcdef', tokenHash: 'a'.repeat(64) }, // auth_changed with tokenId
  ] as AuthChange[]) {
    change(admin, c);
  }
  change('bob', { op: 'user_add', user: 'eve' }); // PERMISSION_DENIED admin
  const a = b.open('alice', 'alice-app');
  const bs = b.open('bob', 'bob-app');
  const t = b.token(b.req('alice', 'alice-app', 'Acquire', { lock: 'app/x', sessionId: a, tryOnly: false }));
  b.req('alice', 'alice-app', 'Write', { lock: 'app/x', sessionId: a, token: t, ops: [put('app/k1', 'v1'), put('app/k2', 'v2')] });
  b.req('alice', 'alice-app', 'Write', { lock: 'app/x', sessionId: a, token: t, ops: [put('app/k3', 'v3')] }); // QUOTA_EXCEEDED keys
  b.req('alice', 'alice-app', 'Acquire', { lock: 'other/y', sessionId: a, tryOnly: false }); // PERMISSION_DENIED lock other/y
  b.req('bob', 'bob-app', 'Acquire', { lock: 'app/x', sessionId: bs, tryOnly: false }); // waiting
  b.req('bob', 'bob-app', 'Release', { lock: 'app/x', sessionId: a, token: t }); // NOT_SESSION_OWNER
  b.req('bob', 'bob-app', 'RevokeSession', { sessionId: a }); // PERMISSION_DENIED admin
  b.req(admin, 'admin-cli', 'RevokeSession', { sessionId: a }); // session_ended revoked, handed to bob
  b.open('bob', 'bob-app');
  return b;
}

/**
 * Results that only older code stored (a Write without its index, a WRONG_LOCK without its owner), a
 * session end by expiry, and odd strings: put straight into the retry table, as a restored old snapshot has them.
 */
function legacyState(): Builder {
  const b = new Builder();
  const s = b.open('', 'old-client');
  b.req('', 'old-client', 'Acquire', { lock: 'L', sessionId: s, tryOnly: false });
  const dedup = (b.m as unknown as { dedup: { record(...args: unknown[]): void } }).dedup;
  const stored: Array<[Command['type'], Result]> = [
    ['Write', { status: 'written', token: 2, ops: 3 }],
    ['Write', { status: 'refused', reason: 'WRONG_LOCK', watermark: 7, key: 'k/ẞ' }],
    ['CloseSession', { status: 'session_ended', sessionId: sid(77), cause: 'expired', released: ['a', 'b/ü'] }],
    ['Write', { status: 'written', token: 2 ** 53 - 1, ops: 1, index: 2 ** 40 + 3 }],
    ['Acquire', { status: 'waiting', holderToken: 2 ** 31 + 5, position: 300 }],
    ['Write', { status: 'refused', reason: 'STALE_TOKEN', watermark: 0, key: '' }],
    ['AuthChange', { status: 'auth_changed' }],
    ['Acquire', { status: 'invalid', message: 'lock: must not be empty \u{1F600}' }],
  ];
  stored.forEach(([type, result], i) => {
    dedup.record('legacy', 'legacy-client', i + 1, 0, type, Object.freeze(result), 10);
    b.requests.push(legacyRetry(type, i + 1, s));
  });
  return b;
}

/** A retry of legacy request `requestId` (its command type is what the table matches). */
function legacyRetry(type: Command['type'], requestId: number, s: string): Command {
  const meta = { clientId: 'legacy-client', requestId, now: 1, caller: 'legacy' };
  switch (type) {
    case 'Write':
      return { type, ...meta, lock: 'L', sessionId: s, token: 2, ops: [put('k', 'v')] } as Command;
    case 'CloseSession':
      return { type, ...meta, sessionId: s } as Command;
    case 'Acquire':
      return { type, ...meta, lock: 'L', sessionId: s, tryOnly: false } as Command;
    default:
      return { type, ...meta, change: { op: 'user_add', user: 'x' } } as Command;
  }
}

export interface FixtureState {
  name: string;
  machine: LockStateMachine;
  /** Every request applied (or recorded), in order: the fixture test asks for each one's stored answer. */
  requests: Command[];
}

export function fixtureStates(): FixtureState[] {
  return [
    ['locks', locksState()],
    ['auth', authState()],
    ['legacy', legacyState()],
  ].map(([name, b]) => ({ name: name as string, machine: (b as Builder).m, requests: (b as Builder).requests }));
}

/**
 * A session or lock as older code observed it: without the labels added since (format 6). The fixtures hold
 * no labels, so it insists that there are none rather than hide them.
 */
function withoutLabels<T extends object>(x: T | undefined): unknown {
  if (x === undefined) return x;
  const { labels, waiterSessions, holder, ...rest } = x as { labels?: unknown[]; waiterSessions?: Array<{ labels: unknown[] }>; holder?: { labels: unknown[] } | null };
  const all = [labels ?? [], ...(waiterSessions ?? []).map((w) => w.labels), holder?.labels ?? []];
  if (all.some((l) => l.length > 0)) throw new Error('a fixture machine with session labels: the fixtures predate them');
  if (holder === undefined) return rest;
  return { ...rest, holder: holder === null ? null : (({ labels: _labels, ...h }) => h)(holder) };
}

/**
 * The machine's counts as older code observed them: without the semaphore counts added since (format 9). The
 * fixtures hold no semaphores, so it insists that those counts are zero rather than hide them.
 */
function withoutSemaphoreStats(stats: ReturnType<LockStateMachine['stats']>): unknown {
  const { semaphores, permitsHeld, permitWaiters, ...rest } = stats;
  if (semaphores !== 0 || permitsHeld !== 0 || permitWaiters !== 0) throw new Error('a fixture machine with semaphores: the fixtures predate them');
  return rest;
}

/**
 * What can be observed of a machine: sessions and leases, locks, keys (tombstones too), the auth tables,
 * the retry table in its order, and the answer a retry of each request gets. Plain JSON.
 */
export function observe(m: LockStateMachine, requests: readonly Command[]): unknown {
  const t = m as unknown as {
    locks: { values(): Iterable<{ name: string }> };
    dedup: { values(): Iterable<{ caller: string; clientId: string; floor: number; entries: Map<number, unknown> }> };
  };
  const text = (b: Uint8Array | null | undefined): string | null => (b == null ? null : new TextDecoder().decode(b));
  return JSON.parse(
    JSON.stringify({
      lastApplied: m.lastApplied,
      sessions: m.sessionIds().map((id) => ({ ...(withoutLabels(m.getSession(id)) as object), owner: m.auth.sessionOwner(id) })),
      leases: m.leases(),
      locks: Array.from(t.locks.values(), (rec) => withoutLabels(m.describeLock(rec.name))),
      keys: m.list('', 10_000, { includeDeleted: true }).map((e) => ({ ...e, value: text(e.value) })),
      auth: { enabled: m.auth.authEnabled(), list: m.auth.authList() },
      dedup: Array.from(t.dedup.values(), (c) => ({ caller: c.caller, clientId: c.clientId, floor: c.floor, entries: Array.from(c.entries.values()) })),
      retries: requests.map((r) => m.storedResult(r as never) ?? null),
      stats: withoutSemaphoreStats(m.stats()),
    }),
  ) as unknown;
}
