/**
 * One simulated application: the real FenceLockClient (src/client) on its actor's ports, doing cycles of
 * acquire, fenced writes, a read and release, some through withLock, now and then closing its session or the
 * whole client (during an outage too). Every call is recorded for test/checker; what the application
 * believes it holds is read off the library's own objects (LockHandle, Session, withLock's AbortSignal), on
 * the client's own clock.
 */
import { FenceLockClient } from '../../src/client/client';
import type { LockHandle, Session } from '../../src/client/session';
import type { Operation, OpKind } from '../checker/history';
import type { Recorder } from '../chaos/recorder';
import type { Prng } from '../support/prng';
import { simClientPorts } from './simClientPorts';
import { addressOf } from './simNode';
import { SimTransport, type SimTransportEnv } from './simTransport';
import type { Actor } from './world';

export interface WorkloadEnv {
  /** Every node ever started (the client is given the first ones; leader hints name later ones). */
  nodeIds: readonly string[];
  locks: readonly string[];
  /** Locks only withLock takes (outside the recorded history). */
  withLockLocks: readonly string[];
  recorder: Recorder;
  transportEnv: SimTransportEnv;
  /** The application started believing it holds a lock (a grant arrived): the lease watch checks it at once. */
  beliefStarted(client: WorkloadClient, lock: string, token: number): void;
  /** close() returned after `elapsedMs` on the client's clock, bounded by `timeoutMs` (plus the client's stalls meanwhile). */
  closeReturned(client: WorkloadClient, elapsedMs: number, timeoutMs: number, stalledMs: number, outage: boolean): void;
  /** Whether the client reaches no node now (every link to a node is cut). */
  cutOff(client: WorkloadClient): boolean;
  trace(line: string): void;
}

/** As FenceLockClient's requestTimeoutMs and totalTimeoutMs, scaled to the simulation. */
const REQUEST_TIMEOUT_MS = 1_000;
const TOTAL_TIMEOUT_MS = 5_000;
const CLOSE_TIMEOUT_MS = 1_000;

/** A grant the application holds: by a handle of its own session, or inside a withLock body (its signal). */
interface Belief {
  handle: LockHandle;
  signal?: AbortSignal;
}

export class WorkloadClient {
  client: FenceLockClient;
  private session: Session | undefined;
  private readonly beliefs = new Map<string, Belief>();
  private writes = 0;
  /** The client's stalls so far (ms), to bound close() by its timeout plus the time it could not run. */
  stalledMs = 0;
  closes = 0;

  constructor(
    readonly name: string,
    readonly actor: Actor,
    private readonly env: WorkloadEnv,
    private readonly prng: Prng,
    /** The library's randomness (client ids), a stream of its own. */
    private readonly random: Prng,
    private readonly ttlMs: number,
  ) {
    this.client = this.newClient();
  }

  private newClient(): FenceLockClient {
    const transport = new SimTransport(this.env.transportEnv, this.actor);
    const first = this.prng.int(this.env.nodeIds.length);
    // Each client starts at a node of its own, as clients given the endpoints in different orders.
    const endpoints = [...this.env.nodeIds.slice(first), ...this.env.nodeIds.slice(0, first)].map(addressOf);
    return new FenceLockClient({
      endpoints,
      insecure: true,
      clientName: this.name,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      totalTimeoutMs: TOTAL_TIMEOUT_MS,
      ports: simClientPorts(this.actor, this.random, transport),
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.client.ports.timers.setTimeout(resolve, ms));
  }

  /** The token of `lock` while the application believes, by the library's presumed-lost rule on its own clock, that it holds it. */
  believes(lock: string): number | undefined {
    const b = this.beliefs.get(lock);
    if (!b || !b.handle.isHeld() || b.handle.isPresumedLost()) return undefined;
    if (b.signal?.aborted) return undefined;
    return Number(b.handle.token);
  }

  /**
   * Inside withLock: how long (client ms) its session has been presumed lost by the clock while the signal
   * has not aborted; undefined when it is not presumed lost, or the signal did abort.
   */
  signalLateBy(lock: string): number | undefined {
    const b = this.beliefs.get(lock);
    if (!b?.signal || b.signal.aborted || !b.handle.session.isPresumedLost()) return undefined;
    return this.actor.monotonicMs() - b.handle.presumedLostAt();
  }

  /** The handle of the grant under `token` of `lock`, while the application believes it. */
  handleOf(lock: string, token: number): LockHandle | undefined {
    const h = this.beliefs.get(lock)?.handle;
    return h && Number(h.token) === token ? h : undefined;
  }

  /** The session the belief about `lock` is under. */
  sessionOf(lock: string): string | undefined {
    return this.beliefs.get(lock)?.handle.session.id;
  }

  /** The workload: cycles until real time `stopAt`, then a close. */
  async run(stopAt: number): Promise<void> {
    while (this.actor.world.now < stopAt) {
      if (this.prng.chance(0.25)) {
        await this.withLockCycle(this.prng.pick(this.env.withLockLocks));
        continue;
      }
      if (!this.session || this.session.isLost() || this.session.isClosed()) await this.open();
      if (!this.session || this.session.isLost()) {
        await this.sleep(100 + this.prng.int(300));
        continue;
      }
      await this.cycle(this.session, this.prng.pick(this.env.locks));
      if (this.prng.chance(0.1)) await this.closeSession();
      else if (this.prng.chance(0.04)) await this.closeClient();
    }
    await this.closeClient();
  }

  private async open(): Promise<void> {
    const o = this.begin('open', { ttlMs: this.ttlMs });
    try {
      const s = await this.client.openSession({ ttlMs: this.ttlMs });
      this.env.recorder.ok(o, { session: s.id });
      this.session = s;
      this.env.trace(`${this.name} opened session ${s.id.slice(0, 8)}`);
      s.onLost((err) => this.env.trace(`${this.name} session ${s.id.slice(0, 8)} lost: ${err.reason ?? err.code} ${err.message}`));
    } catch (err) {
      this.env.recorder.failed(o, err);
    }
  }

  private async cycle(s: Session, lock: string): Promise<void> {
    const waitMs = this.prng.chance(0.4) ? 0 : 200 + this.prng.int(1_500);
    const handle = await this.acquire(s, lock, waitMs);
    if (!handle) {
      await this.sleep(20 + this.prng.int(200));
      return;
    }
    const writes = 1 + this.prng.int(2);
    for (let i = 0; i < writes && this.believes(lock) !== undefined; i++) await this.write(handle);
    if (this.prng.chance(0.3)) await this.get(lock);
    await this.sleep(this.prng.int(300));
    // A holder that lost its lease still writes sometimes: the fencing must refuse it.
    if (this.believes(lock) === undefined && this.prng.chance(0.5)) await this.write(handle);
    await this.release(handle);
  }

  private async acquire(s: Session, lock: string, waitMs: number): Promise<LockHandle | undefined> {
    const o = this.begin('acquire', { lock, session: s.id, waitMs });
    try {
      const handle = waitMs === 0 ? await s.tryAcquire(lock) : await s.acquire(lock, { waitTimeoutMs: waitMs });
      if (!handle) {
        o.outcome = 'fail';
        o.ret = this.env.recorder.time();
        o.error = { code: 'NOT_ACQUIRED', reason: 'LOCK_HELD' };
        return undefined;
      }
      this.env.recorder.ok(o, { token: handle.token });
      return this.believe(lock, { handle });
    } catch (err) {
      this.env.recorder.failed(o, err);
      // As an application should when it cannot know whether it was granted: let the session expire.
      if (o.outcome === 'unknown' && !s.isLost()) s.abandon('acquire outcome unknown');
      return undefined;
    }
  }

  private believe(lock: string, b: Belief): LockHandle {
    this.beliefs.set(lock, b);
    this.env.beliefStarted(this, lock, Number(b.handle.token));
    return b.handle;
  }

  private async write(handle: LockHandle): Promise<void> {
    const key = `${handle.name}/${this.prng.pick(['a', 'b'])}`;
    const value = `${this.name}#${++this.writes}`;
    const o = this.begin('write', { lock: handle.name, session: handle.session.id, token: handle.token, writes: [{ key, value }] });
    try {
      const r = await handle.write([{ put: key, value }]);
      this.env.recorder.ok(o, { token: handle.token, index: r.index });
    } catch (err) {
      this.env.recorder.failed(o, err);
    }
  }

  private async get(lock: string): Promise<void> {
    const key = `${lock}/${this.prng.pick(['a', 'b'])}`;
    const o = this.begin('get', { key, lock });
    try {
      const r = await this.client.get(key);
      this.env.recorder.ok(o, { found: r.found, value: r.found && r.value ? Buffer.from(r.value).toString() : null, token: r.token, lock: r.lock ?? '' });
    } catch (err) {
      this.env.recorder.failed(o, err);
    }
  }

  private async release(handle: LockHandle): Promise<void> {
    const o = this.begin('release', { lock: handle.name, session: handle.session.id, token: handle.token });
    try {
      await handle.release();
      this.env.recorder.ok(o, {});
    } catch (err) {
      this.env.recorder.failed(o, err);
      if (o.outcome === 'unknown' && !handle.session.isLost()) handle.session.abandon('release outcome unknown');
    }
  }

  /**
   * withLock on the client's shared session, on a lock of its own: the body writes while its signal has not
   * fired. withLock retries on a fresh session inside one call, so its grants cannot be told to the history
   * checker as operations of one session; its locks stay out of the history (the lease, signal, fencing and
   * retry checks still see them).
   */
  private async withLockCycle(lock: string): Promise<void> {
    try {
      await this.client.withLock(lock, async (token, handle, signal) => {
        this.believe(lock, { handle, signal });
        const writes = 1 + this.prng.int(2);
        for (let i = 0; i < writes; i++) {
          await this.sleep(this.prng.int(400));
          if (signal.aborted) return;
          await handle.write([{ put: `${lock}/a`, value: `${this.name}#${++this.writes}` }]).catch(() => undefined);
        }
      }, { ttlMs: this.ttlMs, waitTimeoutMs: 1_000 });
    } catch {
      // Not acquired, or its release not confirmed: the library let the shared session go (checked above).
    } finally {
      this.beliefs.delete(lock);
    }
  }

  private async closeSession(): Promise<void> {
    const s = this.session;
    if (!s) return;
    this.session = undefined;
    if (s.isLost()) return;
    const o = this.begin('close', { session: s.id });
    try {
      await s.close();
      this.env.recorder.ok(o, {});
    } catch (err) {
      this.env.recorder.failed(o, err);
    }
  }

  /** FenceLockClient.close with its bound, then a fresh client (a restart of the application). */
  async closeClient(): Promise<void> {
    const outage = this.env.cutOff(this);
    const startedAt = this.actor.monotonicMs();
    const stalledBefore = this.stalledMs;
    await this.client.close({ timeoutMs: CLOSE_TIMEOUT_MS });
    this.closes++;
    this.env.closeReturned(this, this.actor.monotonicMs() - startedAt, CLOSE_TIMEOUT_MS, this.stalledMs - stalledBefore, outage);
    this.session = undefined;
    this.beliefs.clear();
    this.client = this.newClient();
  }

  private begin(op: OpKind, args: Operation['args']): Operation {
    return this.env.recorder.begin(this.name, op, args);
  }
}
