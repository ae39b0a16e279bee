// Minority probes: while a partition window lasts, every node on the minority side is asked directly (raw
// gRPC to that one node: no retries, no leader hints followed) for a try-lock under a live session and a
// linearizable get. They are recorded with the node as their endpoint; the checker's minority-answer
// invariant requires that none completes ok inside the window (docs/architecture.md#promises, promise 5).
import { setTimeout as sleep } from 'node:timers/promises';
import { FenceLockClient } from '../../../src/client';
import type { Recorder } from '../../chaos/recorder';
import type { Operation } from '../../checker';
import type { LocalCluster } from '../harness';
import { header, rawClient, type RawNodeClient } from '../rawClient';
import type { ClusterView } from './clusterView';

export class MinorityProbes {
  /** Probes sent, and how many got an ok (inside a window any ok is a violation). */
  readonly counts = { sent: 0, ok: 0 };
  private readonly raw = new Map<string, RawNodeClient>();
  private readonly running: Promise<void>[] = [];
  private readonly owner: FenceLockClient;
  private session: string | undefined;

  constructor(
    private readonly ns: string,
    private readonly cluster: LocalCluster,
    private readonly view: ClusterView,
    private readonly recorder: Recorder,
    private readonly clock: () => number,
  ) {
    this.owner = new FenceLockClient({ endpoints: cluster.endpoints, clientId: `${ns}-probe-owner`, requestTimeoutMs: 1_000, totalTimeoutMs: 5_000 });
  }

  /** Opens the session the try-locks use (through the majority, before any fault). */
  async openSession(): Promise<void> {
    this.session = (await this.owner.openSession({ ttlMs: 30_000, name: `${this.ns}-probe` })).id;
  }

  /** Probes the nodes of `minority` (those up), round after round, until `over` resolves. */
  start(minority: string[], over: Promise<void>): void {
    this.running.push(this.loop(minority, over));
  }

  /** Resolves when every probe loop has ended. */
  async settled(): Promise<void> {
    await Promise.all(this.running);
  }

  async close(): Promise<void> {
    await this.owner.close().catch(() => undefined);
    for (const c of this.raw.values()) c.close();
  }

  private async loop(minority: string[], over: Promise<void>): Promise<void> {
    let done = false;
    void over.then(() => (done = true));
    for (let n = 0; !done; n++) {
      await Promise.all(minority.filter((id) => this.view.up(id)).map((id) => this.one(id, n)));
      await sleep(100);
    }
  }

  /** One recorded probe of node `id`: a try-lock on even rounds (once there is a session), else a get. */
  private async one(id: string, n: number): Promise<void> {
    const process = `probe-${id}`;
    const endpoint = this.cluster.node(id).address;
    const lock = `${this.ns}-probe/minority-${id}`;
    const acquire = n % 2 === 0 && this.session !== undefined;
    const o = acquire
      ? this.recorder.begin(process, 'acquire', { lock, session: this.session!, waitMs: 0 })
      : this.recorder.begin(process, 'get', { key: `${lock}/k`, lock });
    this.counts.sent++;
    try {
      if (acquire) await this.tryLock(id, o, lock, endpoint);
      else await this.get(id, o, lock, endpoint);
    } catch (err) {
      // Any error of a raw call may hide an effect (a timeout): unknown, never 'fail'.
      o.ret = this.clock();
      o.outcome = 'unknown';
      o.error = { code: String((err as { code?: unknown }).code ?? 'UNKNOWN'), message: (err as Error).message };
      o.endpoint = endpoint;
    }
  }

  private async tryLock(id: string, o: Operation, lock: string, endpoint: string): Promise<void> {
    const req = { header: header(`${this.ns}-probe-${id}`), lock, sessionId: this.session, waitTimeoutMs: '0' };
    const res = await this.client(id).call('Lock', 'Acquire', req, 800);
    if (res.acquired) {
      this.recorder.ok(o, { token: BigInt(res.token as string) }, endpoint);
      this.counts.ok++;
      return;
    }
    o.ret = this.clock();
    o.outcome = 'fail';
    o.error = { code: 'NOT_ACQUIRED', reason: 'LOCK_HELD' };
    o.endpoint = endpoint;
  }

  private async get(id: string, o: Operation, lock: string, endpoint: string): Promise<void> {
    const res = await this.client(id).call('KV', 'Get', { key: `${lock}/k` }, 800);
    const value = res.found ? Buffer.from(res.value as Uint8Array).toString('utf8') : null;
    this.recorder.ok(o, { found: !!res.found, value, token: BigInt((res.token as string) || '0'), lock: (res.lock as string) ?? '' }, endpoint);
    this.counts.ok++;
  }

  private client(id: string): RawNodeClient {
    let c = this.raw.get(id);
    if (!c) this.raw.set(id, (c = rawClient(this.cluster.node(id).address)));
    return c;
  }
}
