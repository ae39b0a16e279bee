// Test harness for the lock state machine: numbers entries, stamps `now`, picks request ids and session
// ids, and checks every invariant after each apply.
import type { SemaphoreRecord, SemaphoreTable } from '../../src/state/semaphores';
import { expect } from 'vitest';
import {
  LockStateMachine,
  SNAPSHOT_FORMAT,
  compareStrings,
  type AuthChange,
  type Command,
  type CommandResult,
  type Result,
  type WriteOp,
} from '../../src/state';
import type { AuthTable } from '../../src/state/auth/authTable';
import type { DedupTable } from '../../src/state/dedup';
import type { FencedKv } from '../../src/state/fencedKv';
import type { LockTable } from '../../src/state/locks';
import type { LockRecord } from '../../src/state/records';
import type { SessionTable } from '../../src/state/sessions';
import { encodePlainSnapshot, type AuthSnapshot, type StateSnapshot } from './snapshotOracle';

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
export const dec = (b: Uint8Array | null | undefined): string | null => (b == null ? null : new TextDecoder().decode(b));

export const put = (key: string, value: string): WriteOp => ({ type: 'put', key, value: enc(value) });
export const del = (key: string): WriteOp => ({ type: 'delete', key });

/** Deterministic session id number n: 32 lowercase hex characters. */
export const sid = (n: number): string => n.toString(16).padStart(32, '0');

/** Snapshot bytes -> machine. */
export function roundTrip(m: LockStateMachine): LockStateMachine {
  return LockStateMachine.readSnapshot(m.writeSnapshot());
}

type Body<T extends Command['type']> = Omit<Extract<Command, { type: T }>, 'type' | 'clientId' | 'requestId' | 'now'> &
  Partial<{ clientId: string; requestId: number; now: number }>;

export class Harness {
  index = 0;
  now = 1_000_000;
  clientId = 'client-1';
  /** Stamped on every request while not '' (the identity the node saw), with `callerToken` when set. */
  caller = '';
  callerToken: string | undefined = undefined;
  nextRequestId = 1;
  private readonly callerRequestIds = new Map<string, number>();
  nextSession = 1;
  checkEachStep = true;
  /** Every command applied, with its outcome (for replays). */
  readonly history: Array<{ index: number; command: Command; outcome: CommandResult }> = [];

  constructor(public m: LockStateMachine = new LockStateMachine()) {
    this.index = m.lastApplied;
  }

  /** Applies at the next index (or `gap` further). */
  apply(command: Command, gap = 1): CommandResult {
    this.index += gap;
    const outcome = this.m.apply(this.index, command);
    this.history.push({ index: this.index, command, outcome });
    if (this.checkEachStep) expect(this.m.checkInvariants()).toEqual([]);
    return outcome;
  }

  /**
   * A request command with fresh ids and the current time (explicit fields win). A caller other than ''
   * sends from its own client id (`<caller>/<clientId>`), numbered from 1: retry records are per caller.
   */
  req<T extends Exclude<Command['type'], 'ExpireSession' | 'CheckpointLeases'>>(type: T, body: Body<T>): Command {
    const clientId = this.caller === '' ? this.clientId : `${this.caller}/${this.clientId}`;
    const requestId = this.caller === '' ? this.nextRequestId++ : (this.callerRequestIds.get(clientId) ?? 0) + 1;
    if (this.caller !== '') this.callerRequestIds.set(clientId, requestId);
    return {
      type,
      clientId,
      requestId,
      now: this.tick(),
      ...(this.caller === '' ? {} : { caller: this.caller }),
      ...(this.callerToken === undefined ? {} : { callerToken: this.callerToken }),
      ...body,
    } as unknown as Command;
  }

  /** Runs `fn` with requests stamped as sent by `caller` (and its token), then restores the previous identity. */
  as<T>(caller: string, fn: () => T, callerToken?: string): T {
    const before = [this.caller, this.callerToken] as const;
    this.caller = caller;
    this.callerToken = callerToken;
    try {
      return fn();
    } finally {
      [this.caller, this.callerToken] = before;
    }
  }

  /** Applies an AuthChange as the current caller. */
  auth(change: AuthChange): CommandResult {
    return this.apply(this.req('AuthChange', { change }));
  }

  /** Advances the clock by 10 ms and returns it (every command gets a fresh `now`). */
  tick(): number {
    this.now += 10;
    return this.now;
  }

  open(ttlMs = 10_000, clientName = 'test'): string {
    const sessionId = sid(this.nextSession++);
    const r = this.apply(this.req('OpenSession', { sessionId, ttlMs, clientName })).result;
    expect(r).toEqual({ status: 'session_opened', sessionId, ttlMs });
    return sessionId;
  }

  acquire(sessionId: string, lock: string, tryOnly = false): CommandResult {
    return this.apply(this.req('Acquire', { lock, sessionId, tryOnly, waitTimeoutMs: tryOnly ? 0 : 5_000 }));
  }

  /** Acquires a free lock and returns its token. */
  grant(sessionId: string, lock: string): number {
    const r = this.acquire(sessionId, lock).result;
    expect(r).toMatchObject({ status: 'granted' });
    return (r as Extract<Result, { status: 'granted' }>).token;
  }

  release(sessionId: string, lock: string, token: number): CommandResult {
    return this.apply(this.req('Release', { lock, sessionId, token }));
  }

  cancel(sessionId: string, lock: string): CommandResult {
    return this.apply(this.req('CancelWait', { lock, sessionId }));
  }

  write(sessionId: string, lock: string, token: number, ops: WriteOp[]): CommandResult {
    return this.apply(this.req('Write', { lock, sessionId, token, ops }));
  }

  close(sessionId: string): CommandResult {
    return this.apply(this.req('CloseSession', { sessionId }));
  }

  expire(sessionId: string): CommandResult {
    return this.apply({ type: 'ExpireSession', now: this.tick(), sessionIds: [sessionId] });
  }

  value(key: string): string | null {
    return dec(this.m.get(key)?.value);
  }
}

/** The machine's tables, for white-box tests (they are private). */
export interface MachineInternals {
  applied: number;
  sessions: SessionTable;
  locks: LockTable;
  kv: FencedKv;
  dedup: DedupTable;
  authTable: AuthTable;
  semaphores: SemaphoreTable;
}

export function internals(m: LockStateMachine): MachineInternals {
  return m as unknown as MachineInternals;
}

/**
 * The plain snapshot of a machine built the straightforward way, independently of the machine's own encoder
 * (walk every table, sort, stringify results): the oracle encodes it to what writeSnapshot must write.
 */
/** The state as formats before 6 keep it: no waiter's queueing time is known (0). */
export function withoutWaitTimes(s: StateSnapshot): StateSnapshot {
  return { ...s, locks: s.locks.map((x) => ({ ...x, waitingSince: x.waiters.map(() => 0) })) };
}

export function referenceSnapshot(m: LockStateMachine): StateSnapshot {
  const t = internals(m);
  const byName = (a: LockRecord, b: LockRecord): number => compareStrings(a.name, b.name);
  const sessions = Array.from(t.sessions.values()).sort((a, b) => compareStrings(a.id, b.id));
  const locks = Array.from(t.locks.values()).sort(byName);
  const keys: StateSnapshot['keys'] = [];
  t.kv.forEachSorted((r) =>
    keys.push({ key: r.key, lock: r.lock, watermark: r.watermark, deleted: r.value === null, value: r.value ?? new Uint8Array(0), payer: r.payer, ...(r.slot === undefined ? {} : { slot: r.slot }) }),
  );
  return {
    format: SNAPSHOT_FORMAT,
    lastApplied: t.applied,
    gcFloor: t.locks.gcFloor,
    sessions: sessions.map((s) => ({
      id: s.id,
      clientName: s.clientName,
      ttlMs: s.ttlMs,
      openedAt: s.openedAt,
      openIndex: s.openIndex,
      remainingMs: s.remainingMs,
      owner: s.owner,
      labels: s.labels.map((l) => ({ key: l.key, value: l.value })),
    })),
    locks: locks.map((rec) => ({
      name: rec.name,
      holder: rec.holder?.id ?? '',
      token: rec.holder === null ? 0 : rec.latestToken,
      grantedAt: rec.grantedAt,
      latestToken: rec.latestToken,
      latestHolder: rec.latestHolder,
      waiters: Array.from(rec.waiters?.keys() ?? [], (s) => s.id),
      waitingSince: Array.from(rec.waiters?.values() ?? []),
      waiterDelays: Array.from(rec.waiters?.keys() ?? [], (s) => rec.waiterDelays?.get(s) ?? 0),
      lockDelayMs: rec.lockDelayMs,
      delayedSince: rec.delayedSince,
      delayedUntil: rec.delayedUntil,
      // Left out (undefined) when none, so that states without read-write locks compare as before them.
      sharedWaiters: rec.sharedWaiters === null ? undefined : Array.from(rec.waiters?.keys() ?? [], (s) => rec.sharedWaiters?.has(s) === true),
      waiterSets: rec.multiWaiters === null ? undefined : Array.from(rec.waiters?.keys() ?? [], (s) => rec.multiWaiters?.get(s)?.locks[0].name ?? ''),
      sharers: rec.sharers === null ? undefined : Array.from(rec.sharers, ([s, g]) => ({ holder: s.id, token: g.token, grantedAt: g.grantedAt })),
    })),
    keys,
    dedup: Array.from(t.dedup.values(), (c) => ({
      caller: c.caller,
      clientId: c.clientId,
      floor: c.floor,
      entries: Array.from(c.entries.values(), (e) => ({ requestId: e.requestId, commandType: e.commandType, result: JSON.stringify(e.result) })),
    })),
    auth: referenceAuth(t.authTable),
    semaphores: Array.from(t.semaphores.values())
      .sort((a: SemaphoreRecord, b: SemaphoreRecord) => compareStrings(a.name, b.name))
      .map((rec) => ({
        name: rec.name,
        permits: rec.permits,
        slots: rec.slots.map((x) => ({ holder: x.holder?.id ?? '', grantedAt: x.grantedAt, latestToken: x.latestToken, latestHolder: x.latestHolder })),
        waiters: Array.from(rec.waiters ?? [], ([s, since]) => ({ sessionId: s.id, since })),
      })),
  };
}

/** The auth table sorted the plain way: users, roles, tokens by name; rules by permission order, then prefix. */
function referenceAuth(a: AuthTable): AuthSnapshot {
  const perms = ['lock', 'write', 'read', 'admin'];
  const byName = (x: { name: string }, y: { name: string }): number => compareStrings(x.name, y.name);
  return {
    enabled: a.enabled,
    users: Array.from(a.users.values(), (u) => ({ name: u.name, roles: [...u.roles].sort(compareStrings) })).sort(byName),
    roles: Array.from(a.roles.values(), (r) => ({
      name: r.name,
      rules: r.rules.map((x) => ({ perm: x.perm as string, prefix: x.prefix })).sort((x, y) => perms.indexOf(x.perm) - perms.indexOf(y.perm) || compareStrings(x.prefix, y.prefix)),
      quotas: Array.from(r.quotas.entries() as Iterable<[string, number]>).sort((x, y) => compareStrings(x[0], y[0])),
    })).sort(byName),
    tokens: Array.from(a.tokens.values(), (x) => ({ id: x.id, user: x.user, hash: x.hash })).sort((x, y) => compareStrings(x.id, y.id)),
  };
}

/** Equal bytes (fast; toEqual on large byte arrays is slow, so it only runs to show a difference). */
export function expectSameBytes(actual: Uint8Array, expected: Uint8Array, what?: string): void {
  if (Buffer.compare(actual, expected) !== 0) expect(actual, what).toEqual(expected);
}

/** Checks that the machine's own snapshot bytes are the oracle's bytes of its reference snapshot. */
export function expectCanonicalSnapshot(m: LockStateMachine): Uint8Array {
  const bytes = m.writeSnapshot();
  expectSameBytes(encodePlainSnapshot(referenceSnapshot(m)), bytes, 'the machine encodes itself like the oracle');
  return bytes;
}
