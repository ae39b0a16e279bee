// Generates realistic VALID histories for the checker's tests: simulated clients on virtual time run the
// chaos workload's cycle (acquire -> fenced write -> maybe get -> release) against the real lock state
// machine (src/state), with network delays, lost requests and lost replies (unknown outcomes), sessions
// that expire while their holder is paused (its late write is then refused), orphan grants revealed by a
// re-entrant acquire, blocking and try acquires, multi-key writes and deletes. Deterministic per seed.
// With `sharedProbability`, some acquires are shared (read) grants of the real state machine: readers hold
// together, their writes are refused SHARED_GRANT, and they release in shared mode (issue 33). With
// `permitProbability` and `setProbability`, some cycles take a permit of a 2-permit semaphore (a write under
// its slot) or AcquireAll of 2 of 3 locks in a random order (a write to each), each released after.
import { LockStateMachine, type Command, type LockEvent, type Result } from '../../src/state';
import { checkedSlot, type FinalRead, type KeyWrite, type LockMode, type OpError, type Operation, type OpKind, type OpArgs, type OpResult } from './history';
import { EventQueue } from '../support/eventQueue';
import { mulberry32 } from '../support/prng';

export interface SimOptions {
  seed: number;
  clients: number;
  /** Cycles per client. */
  cycles: number;
  hotLocks: number;
  coldLocks: number;
  hotProbability: number;
  tryProbability: number;
  readProbability: number;
  /** A request that never arrives (the op's outcome is unknown, nothing applied). */
  lostRequestProbability: number;
  /** A reply that never arrives (unknown outcome, applied). */
  lostReplyProbability: number;
  /** A holder pauses after its grant; its session expires meanwhile and its late write is refused. */
  pauseProbability: number;
  /** Blocking acquire wait (virtual ms). */
  waitMs: number;
  /** Probability that an acquire asks for a shared grant (0: every grant exclusive, as before issue 33). */
  sharedProbability: number;
  /** Probability of a permit cycle, and of an AcquireAll cycle, instead of a lock cycle (default 0). */
  permitProbability: number;
  setProbability: number;
}

export interface SimRun {
  ops: Operation[];
  /** Final read of every key, after the run. */
  final: Map<string, FinalRead>;
  stats: { ops: number; unknown: number; grants: number; expiries: number; staleRefusals: number };
}

/** Timed callbacks on virtual time; ties run in scheduling order. */
class Events {
  private readonly queue = new EventQueue<() => void>();
  now = 0;

  at(time: number, fn: () => void): void {
    this.queue.push(time, fn);
  }

  run(): void {
    for (let ev = this.queue.pop(); ev !== undefined; ev = this.queue.pop()) {
      this.now = Math.max(this.now, ev.time);
      ev.item();
    }
  }
}

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array): string => new TextDecoder().decode(b);

export const DEFAULT_SIM: Omit<SimOptions, 'seed'> = {
  clients: 8,
  cycles: 40,
  hotLocks: 2,
  coldLocks: 50,
  hotProbability: 0.6,
  tryProbability: 0.2,
  readProbability: 0.5,
  lostRequestProbability: 0.02,
  lostReplyProbability: 0.03,
  pauseProbability: 0.03,
  waitMs: 30,
  sharedProbability: 0,
  permitProbability: 0,
  setProbability: 0,
};

const SIM_PERMITS = 2;

export function simulateHistory(options: Partial<SimOptions> & { seed: number }): SimRun {
  const o: SimOptions = { ...DEFAULT_SIM, ...options };
  const rnd = mulberry32(o.seed);
  const ev = new Events();
  const m = new LockStateMachine();
  let index = 0;
  let sessions = 0;
  const ops: Operation[] = [];
  const stats = { ops: 0, unknown: 0, grants: 0, expiries: 0, staleRefusals: 0 };
  /** Every key written, with its resource (a lock, or a semaphore slot). */
  const keys = new Map<string, string>();
  const waiters = new Map<string, (e: LockEvent) => void>();
  /** Waiters are keyed by lock (or `sem:` semaphore) and session. */
  const waiterKey = (e: LockEvent): string | undefined => {
    if (e.type === 'granted' || e.type === 'wait_ended') return `${e.lock}\u0000${e.sessionId}`;
    if (e.type === 'permit_granted' || e.type === 'permit_wait_ended') return `sem:${e.semaphore}\u0000${e.sessionId}`;
    return undefined;
  };
  const dispatch = (events: readonly LockEvent[]): void => {
    for (const e of events) {
      const k = waiterKey(e);
      if (k !== undefined && waiters.has(k)) waiters.get(k)!(e);
    }
  };
  const delay = (): number => 0.1 + rnd() * 2;

  const apply = (cmd: Command): Result => {
    index += 1 + (rnd() < 0.3 ? Math.floor(rnd() * 3) : 0); // tokens are indexes: not consecutive
    const { result, events } = m.apply(index, cmd);
    for (const e of events) if (e.type === 'granted' || e.type === 'permit_granted') stats.grants++;
    dispatch(events);
    if (result.status === 'invalid') throw new Error(`sim: invalid command ${cmd.type}: ${result.message}`);
    return result;
  };
  const meta = (): { clientId: string; requestId: number; now: number } => ({ clientId: '', requestId: 0, now: Math.floor(ev.now) });

  const begin = (process: string, op: OpKind, args: OpArgs): Operation => {
    const rec: Operation = { id: ops.length, process, op, args, call: ev.now, outcome: 'unknown' };
    ops.push(rec);
    return rec;
  };
  const ok = (rec: Operation, result?: OpResult): void => {
    rec.outcome = 'ok';
    if (result) rec.result = result;
  };
  const fail = (rec: Operation, error: OpError): void => {
    rec.outcome = 'fail';
    rec.error = error;
  };
  const refusal = (r: Result): OpError => {
    if (r.status !== 'refused') throw new Error(`sim: expected a refusal, got ${r.status}`);
    return { code: r.reason === 'UNKNOWN_SESSION' ? 'NOT_FOUND' : 'FAILED_PRECONDITION', reason: r.reason, watermark: BigInt(r.watermark) };
  };

  /**
   * One RPC: after a delay the server runs `serve`, which answers now or later with `fin` (records the
   * outcome); the reply travels back, then the client goes on with `next(true)`. A lost request or reply
   * leaves the outcome unknown: the client gives up after `timeout` and goes on with `next(false)`.
   */
  const rpc = (rec: Operation, timeout: number, serve: (answer: (fin: () => void) => void) => void, next: (answered: boolean) => void): void => {
    const lostRequest = rnd() < o.lostRequestProbability;
    const lostReply = !lostRequest && rnd() < o.lostReplyProbability;
    let settled = false;
    if (lostRequest || lostReply) {
      ev.at(ev.now + timeout, () => {
        if (settled) return;
        settled = true;
        rec.ret = ev.now; // when the client gave up: the outcome stays unknown
        stats.unknown++;
        next(false);
      });
    }
    if (lostRequest) return;
    ev.at(ev.now + delay(), () =>
      serve((fin) => {
        if (lostReply) return;
        ev.at(ev.now + delay(), () => {
          if (settled) return;
          settled = true;
          fin();
          rec.ret = ev.now;
          next(true);
        });
      }),
    );
  };

  const expireLater = (session: string, after: number): void => {
    ev.at(ev.now + after, () => {
      const r = m.apply(++index, { type: 'ExpireSession', now: Math.floor(ev.now), sessionIds: [session] });
      if (r.result.status === 'session_ended') stats.expiries++;
      dispatch(r.events);
    });
  };

  interface Client {
    name: string;
    session: string | null;
    cycles: number;
    counter: number;
    retryLock?: string;
    retryMode?: LockMode;
    /** After an acquire of unknown outcome: ask the same again (a re-entrant answer reveals it). */
    retry?: () => void;
  }

  const pickLock = (): string => (rnd() < o.hotProbability ? `hot-${Math.floor(rnd() * o.hotLocks)}` : `cold-${Math.floor(rnd() * o.coldLocks)}`);
  const think = (c: Client): void => ev.at(ev.now + rnd() * 2, () => cycle(c));
  /** Gives the session up without closing it: the "leader" expires it later. */
  const abandon = (c: Client): void => {
    if (c.session !== null) expireLater(c.session, 20 + rnd() * 20);
    c.session = null;
  };

  const open = (c: Client): void => {
    const sessionId = (++sessions).toString(16).padStart(32, '0');
    const rec = begin(c.name, 'open', { ttlMs: 3000 });
    rpc(
      rec,
      20,
      (answer) => {
        apply({ type: 'OpenSession', ...meta(), sessionId, ttlMs: 3000, clientName: c.name });
        answer(() => ok(rec, { session: sessionId }));
      },
      (answered) => {
        if (answered) c.session = sessionId;
        else expireLater(sessionId, 40); // maybe opened; never used
        think(c);
      },
    );
  };

  const cycle = (c: Client): void => {
    if (c.session === null) {
      if (c.cycles <= 0) return;
      open(c);
      return;
    }
    if (c.cycles-- <= 0) {
      const session = c.session;
      const rec = begin(c.name, 'close', { session });
      rpc(
        rec,
        20,
        (answer) => {
          apply({ type: 'CloseSession', ...meta(), sessionId: session });
          answer(() => ok(rec));
        },
        (answered) => {
          if (!answered) expireLater(session, 30);
        },
      );
      c.session = null;
      return;
    }
    const session = c.session;
    const again = c.retry;
    c.retry = undefined;
    if (again !== undefined) {
      again();
      return;
    }
    if (c.retryLock === undefined && o.permitProbability + o.setProbability > 0) {
      const roll = rnd();
      if (roll < o.permitProbability) {
        permitCycle(c, session, `S${Math.floor(rnd() * 2)}`);
        return;
      }
      if (roll < o.permitProbability + o.setProbability) {
        setCycle(c, session, pickSet());
        return;
      }
    }
    const lock = c.retryLock ?? pickLock();
    // Drawn only when shared grants are asked for, so that the histories of earlier seeds stay the same.
    const mode: LockMode = c.retryMode ?? (o.sharedProbability > 0 && rnd() < o.sharedProbability ? 'shared' : 'exclusive');
    c.retryLock = undefined;
    c.retryMode = undefined;
    const wait = rnd() < o.tryProbability ? 0 : o.waitMs;
    const rec = begin(c.name, 'acquire', mode === 'shared' ? { lock, session, waitMs: wait, mode } : { lock, session, waitMs: wait });
    let token: number | undefined;
    rpc(
      rec,
      wait + 30,
      (answer) => {
        const r = apply({ type: 'Acquire', ...meta(), lock, sessionId: session, tryOnly: wait === 0, waitTimeoutMs: wait, ...(mode === 'shared' ? { shared: true } : {}) });
        const grant = (t: number): void => answer(() => {
          token = t;
          ok(rec, { token: BigInt(t) });
        });
        if (r.status === 'granted') grant(r.token);
        else if (r.status === 'held') answer(() => fail(rec, { code: 'NOT_ACQUIRED', reason: 'LOCK_HELD' }));
        else if (r.status === 'refused') answer(() => fail(rec, refusal(r)));
        else if (r.status === 'waiting') {
          const k = `${lock}\u0000${session}`;
          let done = false;
          waiters.set(k, (e) => {
            if (done) return;
            done = true;
            waiters.delete(k);
            if (e.type === 'granted') grant(e.token);
            else answer(() => fail(rec, { code: 'NOT_FOUND', reason: 'UNKNOWN_SESSION' }));
          });
          ev.at(ev.now + wait, () => {
            if (done) return;
            done = true;
            waiters.delete(k);
            const cr = apply({ type: 'CancelWait', ...meta(), lock, sessionId: session });
            if (cr.status === 'granted') grant(cr.token);
            else answer(() => fail(rec, { code: 'DEADLINE_EXCEEDED', reason: 'LOCK_HELD' }));
          });
        }
      },
      (answered) => {
        if (!answered) {
          // The session may hold the lock now: ask again (a re-entrant acquire reveals the token), or give up.
          if (rnd() < 0.5) {
            c.retryLock = lock;
            c.retryMode = mode;
          } else abandon(c);
          think(c);
          return;
        }
        if (token === undefined) {
          if (rec.error?.reason === 'UNKNOWN_SESSION') c.session = null;
          think(c);
          return;
        }
        const t = token;
        if (rnd() < o.pauseProbability) {
          // The holder freezes; its session expires on the leader; it wakes up and writes anyway.
          expireLater(session, 2);
          c.session = null;
          ev.at(ev.now + 10 + rnd() * 30, () => writeStep(c, session, lock, t, true, mode));
        } else {
          writeStep(c, session, lock, t, false, mode);
        }
      },
    );
  };

  /** A reader writes too: the state machine must refuse it SHARED_GRANT. */
  const writeStep = (c: Client, session: string, lock: string, token: number, stale: boolean, mode: LockMode): void => {
    const value = `${c.name}#${c.counter++}`;
    const writes: KeyWrite[] = [{ key: `${lock}/a`, value }];
    const roll = rnd();
    if (roll < 0.2) writes.push({ key: `${lock}/b`, value: `${value}b` });
    else if (roll < 0.25) writes.push({ key: `${lock}/b`, value: null });
    for (const w of writes) keys.set(w.key, lock);
    const rec = begin(c.name, 'write', { lock, session, token: BigInt(token), writes });
    rpc(
      rec,
      20,
      (answer) => {
        const r = apply({
          type: 'Write',
          ...meta(),
          lock,
          sessionId: session,
          token,
          ops: writes.map((w) => (w.value === null ? { type: 'delete' as const, key: w.key } : { type: 'put' as const, key: w.key, value: enc(w.value) })),
        });
        if (r.status === 'written') {
          const at = r.index ?? index; // a retry answers with the index of the entry that applied the write
          answer(() => ok(rec, { token: BigInt(token), index: BigInt(at) }));
        } else {
          if (r.status === 'refused' && r.reason === 'STALE_TOKEN') stats.staleRefusals++;
          answer(() => fail(rec, refusal(r)));
        }
      },
      () => {
        if (stale) {
          think(c);
          return;
        }
        if (rnd() < o.readProbability) readStep(c, `${lock}/${rnd() < 0.8 ? 'a' : 'b'}`, lock, () => releaseStep(c, session, lock, token, mode));
        else releaseStep(c, session, lock, token, mode);
      },
    );
  };

  const readStep = (c: Client, key: string, lock: string, next: () => void): void => {
    const rec = begin(c.name, 'get', { key, lock });
    rpc(
      rec,
      20,
      (answer) => {
        const e = m.get(key);
        const result: OpResult =
          e === undefined || e.value === null
            ? { found: false, value: null, token: BigInt(e?.watermark ?? 0), lock: e?.lock ?? '' }
            : { found: true, value: dec(e.value), token: BigInt(e.watermark), lock: e.lock };
        answer(() => ok(rec, result));
      },
      () => next(),
    );
  };

  const releaseStep = (c: Client, session: string, lock: string, token: number, mode: LockMode): void => {
    const rec = begin(c.name, 'release', mode === 'shared' ? { lock, session, token: BigInt(token), mode } : { lock, session, token: BigInt(token) });
    rpc(
      rec,
      20,
      (answer) => {
        const r = apply({ type: 'Release', ...meta(), lock, sessionId: session, token });
        if (r.status === 'released') answer(() => ok(rec));
        else answer(() => fail(rec, refusal(r)));
      },
      (answered) => {
        if (!answered) abandon(c);
        think(c);
      },
    );
  };

  /** What a grant of unknown outcome leaves: ask again at once, or give the session up. */
  const afterUnknown = (c: Client, retry: () => void): void => {
    if (rnd() < 0.5) c.retry = retry;
    else abandon(c);
    think(c);
  };

  /** A blocked wait: the grant event (or the session's end), else a cancel when the wait runs out. */
  const awaitGrant = (key: string, wait: number, onEvent: (e: LockEvent) => void, onTimeout: () => void): void => {
    let done = false;
    waiters.set(key, (e) => {
      if (done) return;
      done = true;
      waiters.delete(key);
      onEvent(e);
    });
    ev.at(ev.now + wait, () => {
      if (done) return;
      done = true;
      waiters.delete(key);
      onTimeout();
    });
  };

  const permitCycle = (c: Client, session: string, sem: string): void => {
    const wait = rnd() < o.tryProbability ? 0 : o.waitMs;
    const rec = begin(c.name, 'acquirePermit', { semaphore: sem, permits: SIM_PERMITS, session, waitMs: wait });
    let grant: { token: number; slot: number } | undefined;
    rpc(
      rec,
      wait + 30,
      (answer) => {
        const r = apply({ type: 'SemaphoreAcquire', ...meta(), semaphore: sem, sessionId: session, permits: SIM_PERMITS, tryOnly: wait === 0, waitTimeoutMs: wait });
        const granted = (token: number, slot: number): void =>
          answer(() => {
            grant = { token, slot };
            ok(rec, { token: BigInt(token), slot });
          });
        const full = (): void => answer(() => fail(rec, { code: 'NOT_ACQUIRED', reason: 'PERMITS_FULL' }));
        if (r.status === 'permit_granted') granted(r.token, r.slot);
        else if (r.status === 'permits_full') full();
        else if (r.status === 'refused') answer(() => fail(rec, refusal(r)));
        else if (r.status === 'waiting') {
          awaitGrant(
            `sem:${sem}\u0000${session}`,
            wait,
            (e) => (e.type === 'permit_granted' ? granted(e.token, e.slot) : answer(() => fail(rec, { code: 'NOT_FOUND', reason: 'UNKNOWN_SESSION' }))),
            () => {
              const cr = apply({ type: 'SemaphoreCancelWait', ...meta(), semaphore: sem, sessionId: session });
              if (cr.status === 'permit_granted') granted(cr.token, cr.slot);
              else full();
            },
          );
        }
      },
      (answered) => {
        if (!answered) return afterUnknown(c, () => permitCycle(c, session, sem));
        if (grant === undefined) {
          if (rec.error?.reason === 'UNKNOWN_SESSION') c.session = null;
          return think(c);
        }
        permitWrite(c, session, sem, grant.slot, grant.token);
      },
    );
  };

  const permitWrite = (c: Client, session: string, sem: string, slot: number, token: number): void => {
    const key = `${sem}/${slot}/a`;
    keys.set(key, checkedSlot(sem, slot));
    const writes: KeyWrite[] = [{ key, value: `${c.name}#${c.counter++}` }];
    const rec = begin(c.name, 'write', { semaphore: sem, slot, session, token: BigInt(token), writes });
    rpc(
      rec,
      20,
      (answer) => {
        const r = apply({ type: 'Write', ...meta(), lock: sem, slot, sessionId: session, token, ops: [{ type: 'put', key, value: enc(writes[0]!.value!) }] });
        if (r.status === 'written') answer(() => ok(rec, { token: BigInt(token), index: BigInt(r.index ?? index) }));
        else answer(() => fail(rec, refusal(r)));
      },
      () => {
        const release = (): void => permitRelease(c, session, sem, slot, token);
        if (rnd() < o.readProbability) readStep(c, key, checkedSlot(sem, slot), release);
        else release();
      },
    );
  };

  const permitRelease = (c: Client, session: string, sem: string, slot: number, token: number): void => {
    const rec = begin(c.name, 'releasePermit', { semaphore: sem, slot, session, token: BigInt(token) });
    rpc(
      rec,
      20,
      (answer) => {
        const r = apply({ type: 'SemaphoreRelease', ...meta(), semaphore: sem, sessionId: session, token });
        if (r.status === 'permit_released') answer(() => ok(rec));
        else answer(() => fail(rec, refusal(r)));
      },
      (answered) => {
        if (!answered) abandon(c);
        think(c);
      },
    );
  };

  /** 2 of the 3 set locks, in a random order. */
  const pickSet = (): string[] => {
    const first = Math.floor(rnd() * 3);
    return [`set-${first}`, `set-${(first + 1 + Math.floor(rnd() * 2)) % 3}`];
  };

  const setCycle = (c: Client, session: string, locks: string[]): void => {
    const wait = rnd() < o.tryProbability ? 0 : o.waitMs;
    const rec = begin(c.name, 'acquireAll', { locks, session, waitMs: wait });
    let token: number | undefined;
    rpc(
      rec,
      wait + 30,
      (answer) => {
        const r = apply({ type: 'AcquireAll', ...meta(), locks, sessionId: session, tryOnly: wait === 0, waitTimeoutMs: wait });
        const granted = (t: number): void =>
          answer(() => {
            token = t;
            ok(rec, { token: BigInt(t), tokens: locks.map(() => BigInt(t)) });
          });
        const held = (): void => answer(() => fail(rec, { code: 'NOT_ACQUIRED', reason: 'LOCK_HELD' }));
        if (r.status === 'granted') granted(r.token);
        else if (r.status === 'held') held();
        else if (r.status === 'refused') answer(() => fail(rec, refusal(r)));
        else if (r.status === 'waiting') {
          awaitGrant(
            `${locks[0]}\u0000${session}`,
            wait,
            (e) => (e.type === 'granted' ? granted(e.token) : answer(() => fail(rec, { code: 'NOT_FOUND', reason: 'UNKNOWN_SESSION' }))),
            () => {
              const cr = apply({ type: 'CancelWait', ...meta(), lock: locks[0]!, sessionId: session });
              if (cr.status === 'granted') granted(cr.token);
              else held();
            },
          );
        }
      },
      (answered) => {
        if (!answered) return afterUnknown(c, () => setCycle(c, session, locks));
        if (token === undefined) {
          if (rec.error?.reason === 'UNKNOWN_SESSION') c.session = null;
          return think(c);
        }
        setWrites(c, session, locks, token, 0);
      },
    );
  };

  /** The set's writes one lock after the other, then its releases. */
  const setWrites = (c: Client, session: string, locks: string[], token: number, i: number): void => {
    if (i === locks.length) return setReleases(c, session, locks, token, 0);
    const lock = locks[i]!;
    const key = `${lock}/a`;
    keys.set(key, lock);
    const value = `${c.name}#${c.counter++}`;
    const rec = begin(c.name, 'write', { lock, session, token: BigInt(token), writes: [{ key, value }] });
    rpc(
      rec,
      20,
      (answer) => {
        const r = apply({ type: 'Write', ...meta(), lock, sessionId: session, token, ops: [{ type: 'put', key, value: enc(value) }] });
        if (r.status === 'written') answer(() => ok(rec, { token: BigInt(token), index: BigInt(r.index ?? index) }));
        else answer(() => fail(rec, refusal(r)));
      },
      () => setWrites(c, session, locks, token, i + 1),
    );
  };

  const setReleases = (c: Client, session: string, locks: string[], token: number, i: number): void => {
    if (i === locks.length) return think(c);
    const lock = locks[i]!;
    const rec = begin(c.name, 'release', { lock, session, token: BigInt(token) });
    rpc(
      rec,
      20,
      (answer) => {
        const r = apply({ type: 'Release', ...meta(), lock, sessionId: session, token });
        if (r.status === 'released') answer(() => ok(rec));
        else answer(() => fail(rec, refusal(r)));
      },
      (answered) => {
        if (!answered) {
          abandon(c);
          return think(c);
        }
        setReleases(c, session, locks, token, i + 1);
      },
    );
  };

  for (let i = 0; i < o.clients; i++) {
    const c: Client = { name: `c${i}`, session: null, cycles: o.cycles, counter: 0 };
    ev.at(rnd() * 5, () => cycle(c));
  }
  ev.run();

  // Final reads, after everything settled (also recorded as ordinary gets).
  const final = new Map<string, FinalRead>();
  let t = ev.now + 10;
  for (const [key, resource] of [...keys].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const e = m.get(key);
    const read: FinalRead = e === undefined || e.value === null ? { found: false, value: null, token: BigInt(e?.watermark ?? 0) } : { found: true, value: dec(e.value), token: BigInt(e.watermark) };
    final.set(key, read);
    ops.push({
      id: ops.length,
      process: 'final',
      op: 'get',
      args: { key, lock: resource },
      call: t,
      ret: t + 1,
      outcome: 'ok',
      result: { found: read.found, value: read.value, token: read.token, lock: e?.lock ?? '' },
    });
    t += 2;
  }
  stats.ops = ops.length;
  return { ops, final, stats };
}
