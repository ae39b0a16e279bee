/**
 * A simulated client that behaves as FenceLockClient does: a session with keepalives every ttl/3 on its own
 * monotonic clock, the presumed-lost rule of src/client/session.ts, acquires that wait, fenced writes,
 * reads, releases, retries of the same request id at the hinted leader or the next node, and giving up
 * after a time budget (the outcome is then unknown). Every call is recorded for test/checker.
 */
import type { CallScope } from '../../src/node/api/context';
import type { RenewalAnswer } from '../../src/node/runtime/leaderDuties';
import type { NodeRuntime } from '../../src/node/runtime/nodeRuntime';
import type { NodePorts } from '../../src/node/runtime/ports';
import { FenceLockError } from '../../src/client/errors';
import { nextBackoff } from '../../src/client/router';
import { safetyMarginMs } from '../../src/client/session';
import type { Operation, OpKind } from '../checker/history';
import type { Recorder } from '../chaos/recorder';
import type { Prng } from '../support/prng';
import type { Actor } from './world';

/** A call as a node runs it: the real handler of the runtime's services. */
export type NodeCall = (runtime: NodeRuntime, scope: CallScope) => Promise<unknown>;

export type Delivery = { kind: 'answer'; res: Record<string, unknown> } | { kind: 'error'; err: FenceLockError } | { kind: 'timeout' };

export interface ClientEnv {
  nodeIds: readonly string[];
  locks: readonly string[];
  /** Sends one call to a node; resolves with its answer or error, or a timeout on the client's clock. */
  send(client: SimClient, node: number, call: NodeCall, timeoutMs: number): Promise<Delivery>;
  recorder: Recorder;
  /** A node acknowledged a renewal (alive=true), as it answers: the simulation checks the session has not ended. */
  renewalAcknowledged(sessionId: string, nodeId: string): void;
  /** A node answered alive=false: the simulation checks that the session has really ended. */
  sessionDeclaredGone(client: SimClient, sessionId: string, nodeId: string): void;
  /** The client started believing it holds a lock (a grant arrived): the lease watch checks it at once. */
  beliefStarted(client: SimClient, lock: string, token: number): void;
  trace(line: string): void;
}

/** Per attempt, and in all (as FenceLockClient's requestTimeoutMs and totalTimeoutMs, scaled to the simulation). */
const ATTEMPT_TIMEOUT_MS = 1_000;
const TOTAL_TIMEOUT_MS = 5_000;
/** A keepalive stream whose oldest renewal is unanswered this long is abandoned (FenceLockClient: requestTimeoutMs). */
const STALL_MS = 2_000;

interface SimSession {
  id: string;
  ttlMs: number;
  /** Client-monotonic time the lease is estimated to end: a renewal's SEND time plus the TTL. */
  leaseEndsAt: number;
  lost: boolean;
  /** As the server reported it at Open. */
  electionTimeoutMs: number;
  renewTimer: { id: number } | undefined;
}

export class SimClient {
  private target: number;
  /** Bumped whenever the keepalive stream moves to another node: answers on the old one are ignored. */
  private stream = 0;
  private streamBackoff = 0;
  private streamHints = 0;
  private requestId = 0;
  private session: SimSession | undefined;
  private readonly held = new Map<string, number>();
  private readonly ports: NodePorts;
  writes = 0;

  constructor(
    readonly name: string,
    readonly actor: Actor,
    private readonly env: ClientEnv,
    private readonly prng: Prng,
    private readonly ttlMs: number,
  ) {
    this.target = prng.int(env.nodeIds.length);
    this.ports = actor.ports({ fraction: () => prng.next(), bytes: () => new Uint8Array(0) });
  }

  private mono(): number {
    return this.actor.monotonicMs();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.ports.timers.setTimeout(resolve, ms));
  }

  /** The token of `lock` while this client believes, by the presumed-lost rule on its own clock, that it holds it. */
  believes(lock: string): number | undefined {
    const token = this.held.get(lock);
    const s = this.session;
    if (token === undefined || !s || s.lost) return undefined;
    return this.mono() < s.leaseEndsAt - safetyMarginMs(s.ttlMs, s.electionTimeoutMs) ? token : undefined;
  }

  heldLocks(): string[] {
    return [...this.held.keys()];
  }

  sessionId(): string | undefined {
    return this.session?.id;
  }

  /** The workload: cycles of acquire, fenced writes, a read, release, until real time `stopAt`. */
  async run(stopAt: number): Promise<void> {
    while (this.actor.world.now < stopAt) {
      if (!this.session || this.session.lost) await this.open();
      if (!this.session || this.session.lost) {
        await this.sleep(100 + this.prng.int(300));
        continue;
      }
      await this.cycle(this.prng.pick(this.env.locks));
      if (this.prng.chance(0.12)) await this.close();
    }
    await this.close();
  }

  private async cycle(lock: string): Promise<void> {
    const waitMs = this.prng.chance(0.4) ? 0 : 200 + this.prng.int(1_500);
    const token = await this.acquire(lock, waitMs);
    if (token === undefined) {
      await this.sleep(20 + this.prng.int(200));
      return;
    }
    const writes = 1 + this.prng.int(2);
    for (let i = 0; i < writes && this.believes(lock) !== undefined; i++) await this.write(lock, token);
    if (this.prng.chance(0.3)) await this.get(`${lock}/${this.prng.pick(['a', 'b'])}`, lock);
    await this.sleep(this.prng.int(300));
    // A holder that lost its lease still writes sometimes: the fencing must refuse it.
    if (this.believes(lock) === undefined && this.prng.chance(0.5)) await this.write(lock, token);
    await this.release(lock, token);
  }

  private header(): { clientId: string; requestId: string; ackedBelow: string } {
    return { clientId: this.name, requestId: String(++this.requestId), ackedBelow: '0' };
  }

  /** One request with FenceLockClient's retries: same request id, leader hints first, then the next node. */
  private async request(what: string, call: NodeCall, attemptTimeoutMs: number): Promise<{ res?: Record<string, unknown>; err?: FenceLockError }> {
    const deadline = this.mono() + TOTAL_TIMEOUT_MS + attemptTimeoutMs;
    let hints = 0;
    let backoff = 0;
    let lastErr: FenceLockError | undefined;
    for (;;) {
      const d = await this.env.send(this, this.target, call, attemptTimeoutMs);
      if (d.kind === 'answer') return { res: d.res };
      if (d.kind === 'error' && d.err.code !== 'UNAVAILABLE') return { err: d.err };
      lastErr =
        d.kind === 'error' ? d.err : new FenceLockError('DEADLINE_EXCEEDED', `${what}: no answer within ${attemptTimeoutMs} ms`, { indeterminate: true });
      const hint = d.kind === 'error' ? d.err.leader : undefined;
      const hinted = hint === undefined ? -1 : this.env.nodeIds.findIndex((id) => hint.startsWith(`${id}.`));
      if (hinted >= 0 && hinted !== this.target && hints < this.env.nodeIds.length) {
        this.target = hinted;
        hints++;
        continue;
      }
      hints = 0;
      this.target = (this.target + 1) % this.env.nodeIds.length;
      backoff = Math.min(backoff === 0 ? 20 : backoff * 2, 400);
      if (this.mono() + backoff >= deadline) return { err: lastErr };
      await this.sleep(backoff);
    }
  }

  private finish(o: Operation, r: { res?: Record<string, unknown>; err?: FenceLockError }, result: Operation['result'] = {}): void {
    if (r.err) this.env.recorder.failed(o, r.err, this.env.nodeIds[this.target]);
    else this.env.recorder.ok(o, result, this.env.nodeIds[this.target]);
  }

  private begin(op: OpKind, args: Operation['args']): Operation {
    return this.env.recorder.begin(this.name, op, args);
  }

  private async open(): Promise<void> {
    const ttlMs = this.ttlMs;
    const header = this.header();
    const o = this.begin('open', { ttlMs });
    const sentAt = this.mono();
    const r = await this.request('open', (rt, scope) => rt.services.session.calls.open.handle({ header, ttlMs: String(ttlMs), clientName: this.name, labels: {} }, scope), ATTEMPT_TIMEOUT_MS);
    const id = r.res?.sessionId as string | undefined;
    this.finish(o, r, id ? { session: id } : {});
    if (!id) return;
    // The lease cannot have started before the Open was first sent.
    this.session = { id, ttlMs, leaseEndsAt: sentAt + ttlMs, lost: false, electionTimeoutMs: Number(r.res?.electionTimeoutMs ?? 0), renewTimer: undefined };
    this.held.clear();
    this.env.trace(`${this.name} opened session ${id.slice(0, 8)}`);
    this.scheduleRenewal(this.session);
    void this.renew(this.session); // a session added to the stream is renewed at once
  }

  private scheduleRenewal(s: SimSession): void {
    s.renewTimer = this.ports.timers.setTimeout(() => {
      if (s !== this.session || s.lost) return;
      this.scheduleRenewal(s);
      void this.renew(s);
    }, Math.floor(s.ttlMs / 3));
  }

  /**
   * One renewal on the client's keepalive "stream" (its current node), as KeepAliveStream does it. An
   * acknowledgement extends the lease from the renewal's send time, also when it comes late, as long as the
   * stream is still the current one. The stream moves: at once to a hinted leader; after a backoff to the
   * next node when the node refuses or resets it; at once when a renewal stays unanswered for STALL_MS. A
   * stream that opens on a node renews every session at once (this one, here).
   */
  private async renew(s: SimSession): Promise<void> {
    const sentAt = this.mono();
    if (sentAt >= s.leaseEndsAt) return this.markLost(s, 'no renewal acknowledged for a whole TTL');
    const stream = this.stream;
    const d = await this.env.send(this, this.target, (rt) => keepAliveCall(this.env, rt, s.id), STALL_MS);
    if (s !== this.session || s.lost || stream !== this.stream) return; // an answer on an abandoned stream
    if (d.kind === 'answer') {
      this.streamBackoff = 0;
      this.streamHints = 0;
      if (d.res.alive !== true) {
        this.env.sessionDeclaredGone(this, s.id, this.env.nodeIds[this.target]!);
        return this.markLost(s, 'the leader answered alive=false');
      }
      const remaining = Number(d.res.remainingMs);
      const end = sentAt + (remaining > 0 ? Math.min(s.ttlMs, remaining) : s.ttlMs);
      if (end > s.leaseEndsAt) s.leaseEndsAt = end;
      return;
    }
    this.stream++;
    const hint = d.kind === 'error' ? d.err.leader : undefined;
    const hinted = hint === undefined ? -1 : this.env.nodeIds.findIndex((id) => hint.startsWith(`${id}.`));
    if (hinted >= 0 && hinted !== this.target && this.streamHints < this.env.nodeIds.length) {
      this.streamHints++;
      this.target = hinted;
    } else {
      this.streamHints = 0;
      this.target = (this.target + 1) % this.env.nodeIds.length;
      if (d.kind === 'error') {
        this.streamBackoff = nextBackoff(this.streamBackoff);
        await this.sleep(this.streamBackoff);
        if (s !== this.session || s.lost) return;
      }
    }
    return this.renew(s);
  }

  private markLost(s: SimSession, why: string): void {
    if (s.lost) return;
    s.lost = true;
    this.ports.timers.clearTimeout(s.renewTimer);
    this.held.clear();
    this.env.trace(`${this.name} session ${s.id.slice(0, 8)} lost: ${why}`);
  }

  private async acquire(lock: string, waitMs: number): Promise<number | undefined> {
    const s = this.session!;
    const header = this.header();
    const o = this.begin('acquire', { lock, session: s.id, waitMs });
    const req = { header, lock, sessionId: s.id, waitTimeoutMs: String(waitMs) };
    const r = await this.request('acquire', (rt, scope) => rt.services.lock.calls.acquire.handle(req, scope), waitMs + ATTEMPT_TIMEOUT_MS);
    if (r.res && r.res.acquired !== true) {
      this.env.recorder.failed(o, new FenceLockError('NOT_ACQUIRED' as never, 'held by another session', { reason: 'LOCK_HELD' }));
      o.outcome = 'fail';
      o.error = { code: 'NOT_ACQUIRED', reason: 'LOCK_HELD' };
      return undefined;
    }
    const token = r.res ? Number(r.res.token) : undefined;
    this.finish(o, r, token !== undefined ? { token: BigInt(token) } : {});
    if (o.outcome === 'unknown') this.abandon(s, 'acquire outcome unknown');
    if (token === undefined || s !== this.session || s.lost) return undefined;
    this.held.set(lock, token);
    this.env.beliefStarted(this, lock, token);
    return token;
  }

  private async write(lock: string, token: number): Promise<void> {
    const s = this.session!;
    const key = `${lock}/${this.prng.pick(['a', 'b'])}`;
    const value = `${this.name}#${++this.writes}`;
    const header = this.header();
    const o = this.begin('write', { lock, session: s.id, token: BigInt(token), writes: [{ key, value }] });
    const req = { header, lock, token: String(token), sessionId: s.id, ops: [{ type: 'PUT' as const, key, value: Buffer.from(value) }] };
    const r = await this.request('write', (rt, scope) => rt.services.kv.calls.write.handle(req, scope), ATTEMPT_TIMEOUT_MS);
    this.finish(o, r, r.res ? { token: BigInt(token), index: BigInt(String(r.res.index)) } : {});
  }

  private async get(key: string, lock: string): Promise<void> {
    const o = this.begin('get', { key, lock });
    const r = await this.request('get', (rt, scope) => rt.services.kv.calls.get.handle({ key, staleOk: false }, scope), ATTEMPT_TIMEOUT_MS);
    const res = r.res;
    this.finish(o, r, res ? {
      found: res.found === true,
      value: res.found === true ? Buffer.from(res.value as Uint8Array).toString() : null,
      token: BigInt(String(res.token)),
      lock: String(res.lock ?? ''),
    } : {});
  }

  private async release(lock: string, token: number): Promise<void> {
    const s = this.session!;
    this.held.delete(lock); // from the moment the release is sent, the holder stops using the lock
    const header = this.header();
    const o = this.begin('release', { lock, session: s.id, token: BigInt(token) });
    const req = { header, lock, sessionId: s.id, token: String(token) };
    const r = await this.request('release', (rt, scope) => rt.services.lock.calls.release.handle(req, scope), ATTEMPT_TIMEOUT_MS);
    this.finish(o, r);
    if (o.outcome === 'unknown') this.abandon(s, 'release outcome unknown');
  }

  private async close(): Promise<void> {
    const s = this.session;
    if (!s) return;
    this.session = undefined;
    this.held.clear();
    this.ports.timers.clearTimeout(s.renewTimer);
    if (s.lost) return;
    s.lost = true;
    const header = this.header();
    const o = this.begin('close', { session: s.id });
    const r = await this.request('close', (rt, scope) => rt.services.session.calls.close.handle({ header, sessionId: s.id }, scope), ATTEMPT_TIMEOUT_MS);
    this.finish(o, r);
  }

  /** As the real client does when an outcome is unknown: stop renewing, let the session expire, start anew. */
  private abandon(s: SimSession, why: string): void {
    this.markLost(s, `abandoned: ${why}`);
    if (this.session === s) this.session = undefined;
  }
}

/** KeepAlive as the stream handler runs it; a renewal the leader does not acknowledge never gets an answer. */
function keepAliveCall(env: ClientEnv, rt: NodeRuntime, sessionId: string): Promise<unknown> {
  const answer = rt.services.session.calls.keepAlive({ sessionId, renewalId: '0' });
  // An answer given at once is seen at once; one that waits for a checkpoint reset, when it comes.
  return answer instanceof Promise ? answer.then((a) => delivered(env, rt, sessionId, a)) : delivered(env, rt, sessionId, answer);
}

function delivered(env: ClientEnv, rt: NodeRuntime, sessionId: string, answer: RenewalAnswer): Promise<unknown> {
  if (answer === 'no-ack') return new Promise<never>(() => undefined);
  if (answer.alive) env.renewalAcknowledged(sessionId, rt.context.config.id);
  return Promise.resolve(answer);
}
