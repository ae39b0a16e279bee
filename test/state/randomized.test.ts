// Seeded random command sequences: two machines, one restored from a snapshot midway (and again later), must
// give identical results; invariants hold after every step; a model checks the lock and fencing promises.
import { describe, expect, it } from 'vitest';
import {
  LockStateMachine,
  Reason,
  type Command,
  type CommandResult,
  type Result,
  type WriteOp,
} from '../../src/state';
import { expectCanonicalSnapshot, roundTrip, sid } from './harness';
import { mulberry32 } from '../support/prng';

const SESSIONS = Array.from({ length: 6 }, (_, i) => sid(0x100 + i));
const LOCKS = ['a', 'b', 'c', 'd'];
const KEYS = ['k0', 'k1', 'k2', 'x/é', 'x/\u{1F600}'];
const CLIENTS = ['alpha', 'beta', 'gamma'];

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

/** The model: what the promises say must be observed, from outside the machine. */
class Model {
  holder = new Map<string, { session: string; token: number }>();
  lastGrant = new Map<string, number>();
  watermark = new Map<string, number>();
  firstResult = new Map<string, Result>();
  issued: number[] = [];

  observe(seed: number, step: number, m: LockStateMachine, command: Command, out: CommandResult, retry: boolean): void {
    const where = `seed ${seed} step ${step}`;
    const c = command as Command & { clientId?: string; requestId?: number };
    const id = c.clientId ? `${c.clientId}/${c.requestId}` : undefined;
    if (out.duplicate) {
      expect(id, where).toBeDefined();
      expect(out.result, `${where}: a retry returns the first result`).toEqual(this.firstResult.get(id!));
      expect(out.events, where).toEqual([]);
      return;
    }
    if (retry && id !== undefined && this.firstResult.has(id)) {
      // the only way a retry is not answered from the table: its result was dropped, and then it must not apply
      expect(out.result, `${where}: retry applied twice`).toEqual({ status: 'refused', reason: Reason.REQUEST_TOO_OLD, watermark: 0 });
      return;
    }
    if (id !== undefined && !(out.result.status === 'refused' && (out.result.reason === Reason.REQUEST_TOO_OLD || out.result.reason === Reason.REQUEST_ID_REUSED))) {
      this.firstResult.set(id, out.result);
    }
    for (const e of out.events) {
      if (e.type === 'granted') {
        check(!this.holder.has(e.lock), `${where}: two holders of ${e.lock}`);
        check(e.token > (this.lastGrant.get(e.lock) ?? 0), `${where}: token of ${e.lock} must increase`);
        check(e.token === m.lastApplied, `${where}: token is not the index of the granting entry`);
        this.holder.set(e.lock, { session: e.sessionId, token: e.token });
        this.lastGrant.set(e.lock, e.token);
        this.issued.push(e.token);
      } else if (e.type === 'released') {
        const h = this.holder.get(e.lock);
        check(h?.session === e.sessionId && h.token === e.token, `${where}: released by a non-holder`);
        this.holder.delete(e.lock);
      }
    }
    if (out.result.status === 'written' && command.type === 'Write') {
      const h = this.holder.get(command.lock);
      check(h?.session === command.sessionId && h.token === command.token, `${where}: write accepted from a non-holder`);
      for (const op of command.ops) {
        check(command.token >= (this.watermark.get(op.key) ?? 0), `${where}: write accepted below the watermark of ${op.key}`);
        this.watermark.set(op.key, command.token);
      }
    }
    for (const lock of LOCKS) {
      const h = this.holder.get(lock);
      const holder = m.describeLock(lock)?.holder ?? null;
      check(h === undefined ? holder === null : holder?.sessionId === h.session && holder.token === h.token, `${where}: holder of ${lock}`);
    }
    for (const [key, w] of this.watermark) check(m.get(key)?.watermark === w, `${where}: watermark of ${key}`);
  }
}

function generator(rnd: () => number) {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const requestIds = new Map<string, number>(CLIENTS.map((c) => [c, 0]));
  const history: Command[] = [];
  let now = 1_000;

  const meta = () => {
    const clientId = pick(CLIENTS);
    const requestId = requestIds.get(clientId)! + 1;
    requestIds.set(clientId, requestId);
    const ack = rnd() < 0.05 ? { ackedBelow: Math.max(0, requestId - Math.floor(rnd() * 50)) } : {};
    return { clientId, requestId, now: (now += Math.floor(rnd() * 100)), ...ack };
  };

  return (m: LockStateMachine, issued: number[]): { command: Command; retry: boolean } => {
    const r = rnd();
    if (r < 0.08 && history.length > 0) return { command: pick(history), retry: true };
    const lock = pick(LOCKS);
    const open = m.sessionIds();
    const sessionId = open.length > 0 && rnd() < 0.75 ? pick(open) : pick(SESSIONS);
    // mostly the lock's own keys, sometimes any key (which may belong to another lock)
    const key = (): string => (rnd() < 0.8 ? `${lock}/${pick(KEYS)}` : `${pick(LOCKS)}/${pick(KEYS)}`);
    const holder = m.describeLock(lock)?.holder;
    const someToken = (): number => {
      const q = rnd();
      if (q < 0.55 && holder) return holder.token;
      if (q < 0.85 && issued.length > 0) return pick(issued);
      return 1 + Math.floor(rnd() * (m.lastApplied + 20));
    };
    const who = (): string => (holder && rnd() < 0.6 ? holder.sessionId : sessionId);
    let command: Command;
    if (r < 0.16) command = { type: 'OpenSession', ...meta(), sessionId: pick(SESSIONS), ttlMs: 5_000, clientName: pick(['', 'w', 'ü']) };
    else if (r < 0.2) command = { type: 'CloseSession', ...meta(), sessionId };
    else if (r < 0.26) command = { type: 'ExpireSession', now, sessionIds: [sessionId] };
    else if (r < 0.48) command = { type: 'Acquire', ...meta(), lock, sessionId, tryOnly: rnd() < 0.3, waitTimeoutMs: 1_000 };
    else if (r < 0.54) command = { type: 'CancelWait', ...meta(), lock, sessionId };
    else if (r < 0.66) command = { type: 'Release', ...meta(), lock, sessionId: who(), token: someToken() };
    else if (r < 0.97) {
      const ops: WriteOp[] = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () =>
        rnd() < 0.8
          ? { type: 'put', key: key(), value: Uint8Array.of(Math.floor(rnd() * 256)) }
          : { type: 'delete', key: key() },
      );
      command = { type: 'Write', ...meta(), lock, sessionId: who(), token: someToken(), ops };
    } else command = { type: 'ExpireSession', now, sessionIds: [sid(0xdead)] }; // never opened
    history.push(command);
    return { command, retry: false };
  };
}

function run(seed: number, steps: number): { statuses: Map<string, number> } {
  const rnd = mulberry32(seed);
  const next = generator(rnd);
  const model = new Model();
  let a = new LockStateMachine();
  let b = new LockStateMachine();
  const restoreAt = new Set([Math.floor(steps / 2), Math.floor(steps / 3), steps - 5]);
  const statuses = new Map<string, number>();
  let index = 0;
  for (let step = 0; step < steps; step++) {
    index += rnd() < 0.1 ? 2 + Math.floor(rnd() * 3) : 1;
    const { command, retry } = next(a, model.issued);
    const outA = a.apply(index, command);
    const outB = b.apply(index, command);
    // JSON comparison is strict (key order included) and much faster than toEqual on every step
    if (JSON.stringify(outB) !== JSON.stringify(outA)) {
      expect(outB, `seed ${seed} step ${step}: restored machine differs`).toEqual(outA);
    }
    const problems = a.checkInvariants();
    if (problems.length > 0) expect(problems, `seed ${seed} step ${step}`).toEqual([]);
    model.observe(seed, step, a, command, outA, retry);
    const status = outA.duplicate
      ? 'duplicate'
      : outA.result.status === 'refused'
        ? `refused:${outA.result.reason}`
        : outA.result.status;
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    if (restoreAt.has(step) || step % 37 === 0) {
      // The machine's own encoder writes exactly the bytes of the plain reference snapshot.
      expectCanonicalSnapshot(a);
      b = roundTrip(b);
      expect(b.checkInvariants()).toEqual([]);
      expectCanonicalSnapshot(b);
      if (step === steps - 5) a = roundTrip(a); // both restored: still equal to each other
    }
  }
  expect(b.writeSnapshot(), `seed ${seed}: final snapshots differ`).toEqual(a.writeSnapshot());
  return { statuses };
}

describe('randomized (seeded)', () => {
  it('original and restored machines agree, invariants and promises hold', () => {
    const total = new Map<string, number>();
    for (let seed = 1; seed <= 25; seed++) {
      const { statuses } = run(seed, 1_200);
      for (const [s, n] of statuses) total.set(s, (total.get(s) ?? 0) + n);
    }
    if (process.env.STATE_RANDOM_VERBOSE) console.log(Object.fromEntries([...total].sort()));
    // The generator reaches every interesting outcome (otherwise the test proves little).
    for (const s of [
      'session_opened',
      'session_ended',
      'granted',
      'waiting',
      'held',
      'cancelled',
      'not_waiting',
      'released',
      'written',
      'duplicate',
      `refused:${Reason.STALE_TOKEN}`,
      `refused:${Reason.LOCK_NOT_HELD}`,
      `refused:${Reason.WRONG_LOCK}`,
      `refused:${Reason.UNKNOWN_SESSION}`,
      `refused:${Reason.NOT_HOLDER}`,
      `refused:${Reason.WRONG_TOKEN}`,
      `refused:${Reason.SESSION_EXISTS}`,
      `refused:${Reason.REQUEST_TOO_OLD}`,
    ]) {
      expect(total.get(s) ?? 0, `outcome ${s} never reached`).toBeGreaterThan(0);
    }
  });
});
