/**
 * Issue 34's capabilities as applications use them, each on the real FenceLockClient of an actor of its own:
 * campaigners in one election (campaign, proclaim, resign), observers of it, holders of a lock whose acquires
 * carry a lock-delay (and who sometimes let their session expire instead of releasing), and an admin who
 * revokes that lock and the election's at random. Their locks stay out of the recorded history (the
 * linearizability model knows neither revokes nor delays); featureChecks.ts checks them.
 */
import { FenceLockClient } from '../../src/client/client';
import type { Leadership } from '../../src/client/leadership';
import type { LockHandle, Session } from '../../src/client/session';
import type { Prng } from '../support/prng';
import { simClientPorts } from './simClientPorts';
import { addressOf } from './simNode';
import { SimTransport, type SimTransportEnv } from './simTransport';
import type { Actor } from './world';

/** The election every campaigner runs in (its lock and its key). */
export const ELECTION = 'E';
/** The lock whose grants carry lock-delays and get revoked. */
export const DELAYED_LOCK = 'R0';

export interface FeatureEnv {
  nodeIds: readonly string[];
  transportEnv: SimTransportEnv;
  ttlMs: number;
  /** The application started believing it holds a lock (the lease watch checks it at once). */
  beliefStarted(actor: FeatureActor, lock: string, token: number): void;
  /** A campaign returned: `value` leads under `token`. */
  leads(actor: FeatureActor, token: number, value: string): void;
  /** An observer reported a leadership. */
  observed(observer: string, token: number, text: string): void;
  trace(line: string): void;
}

/** What the lease checks read off an application: the grant it believes it holds. */
export interface Believer {
  readonly name: string;
  readonly actor: Actor;
  believes(lock: string): number | undefined;
  sessionOf(lock: string): string | undefined;
  /** The handle of the grant under `token` of `lock`, while the application keeps it. */
  handleOf(lock: string, token: number): LockHandle | undefined;
}

const REQUEST_TIMEOUT_MS = 1_000;
const TOTAL_TIMEOUT_MS = 5_000;

export abstract class FeatureActor implements Believer {
  protected client: FenceLockClient;
  protected held: LockHandle | undefined;
  protected n = 0;

  constructor(
    readonly name: string,
    readonly actor: Actor,
    protected readonly env: FeatureEnv,
    protected readonly prng: Prng,
    random: Prng,
  ) {
    const transport = new SimTransport(env.transportEnv, actor);
    const first = prng.int(env.nodeIds.length);
    const endpoints = [...env.nodeIds.slice(first), ...env.nodeIds.slice(0, first)].map(addressOf);
    this.client = new FenceLockClient({
      endpoints,
      insecure: true,
      clientName: name,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      totalTimeoutMs: TOTAL_TIMEOUT_MS,
      ports: simClientPorts(actor, random, transport),
    });
  }

  abstract run(stopAt: number): Promise<void>;

  protected sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.client.ports.timers.setTimeout(resolve, ms));
  }

  protected close(): Promise<void> {
    return this.client.close({ timeoutMs: 1_000 });
  }

  believes(lock: string): number | undefined {
    const h = this.held;
    if (!h || h.name !== lock || !h.isHeld() || h.isPresumedLost()) return undefined;
    return Number(h.token);
  }

  sessionOf(lock: string): string | undefined {
    return this.held?.name === lock ? this.held.session.id : undefined;
  }

  handleOf(lock: string, token: number): LockHandle | undefined {
    const h = this.held;
    return h && h.name === lock && Number(h.token) === token ? h : undefined;
  }

  protected hold(handle: LockHandle): void {
    this.held = handle;
    this.env.beliefStarted(this, handle.name, Number(handle.token));
    handle.onLost((err) => this.env.trace(`${this.name} lost ${handle.name} token ${handle.token}: ${err.reason ?? err.code}`));
  }
}

/** Campaigns, leads for a while (proclaiming now and then), resigns. */
export class Campaigner extends FeatureActor {
  private leadership: Leadership | undefined;

  async run(stopAt: number): Promise<void> {
    const election = this.client.election(ELECTION, { ttlMs: this.env.ttlMs });
    while (this.actor.world.now < stopAt) {
      const value = `${this.name}#${++this.n}`;
      try {
        this.leadership = await election.campaign(value, { waitMs: 300 + this.prng.int(2_500) });
      } catch {
        await this.sleep(100 + this.prng.int(400));
        continue;
      }
      const l = this.leadership;
      this.env.leads(this, Number(l.token), value);
      this.hold(l.lock);
      await this.sleep(this.prng.int(2_000));
      if (this.prng.chance(0.5) && !l.signal.aborted) await l.proclaim(`${value}/p`).catch(() => undefined);
      await this.sleep(this.prng.int(1_000));
      this.held = undefined;
      await l.resign().catch(() => undefined);
    }
    await this.close();
  }
}

/** Reports each leadership it sees, from start to stop. */
export class Observer extends FeatureActor {
  async run(stopAt: number): Promise<void> {
    const watch = this.client.election(ELECTION).observe((leader) => this.env.observed(this.name, Number(leader.token), leader.text), { resyncMs: 1_000 + this.prng.int(4_000) });
    while (this.actor.world.now < stopAt) await this.sleep(500);
    watch.cancel();
    await this.close();
  }
}

/** Takes the delayed lock (a lock-delay on most acquires), writes under it, releases or lets its session expire. */
export class DelayedHolder extends FeatureActor {
  private session: Session | undefined;

  async run(stopAt: number): Promise<void> {
    while (this.actor.world.now < stopAt) {
      const s = await this.open();
      if (!s) {
        await this.sleep(100 + this.prng.int(300));
        continue;
      }
      const handle = await this.acquire(s);
      if (!handle) {
        await this.sleep(50 + this.prng.int(300));
        continue;
      }
      await this.write(handle);
      // Long enough that an admin's revoke often lands more than the revoke check's bound before the release.
      await this.sleep(this.prng.int(8_000));
      if (this.prng.chance(0.5)) await this.write(handle);
      this.held = undefined;
      if (this.prng.chance(0.2)) {
        // The grant ends by expiry, which starts its lock-delay.
        s.abandon('the simulated application lets its session expire');
        this.session = undefined;
      } else {
        await handle.release().catch(() => undefined);
      }
    }
    await this.close();
  }

  private async open(): Promise<Session | undefined> {
    if (this.session && !this.session.isLost() && !this.session.isClosed()) return this.session;
    this.session = await this.client.openSession({ ttlMs: this.env.ttlMs }).catch(() => undefined);
    return this.session;
  }

  private async acquire(s: Session): Promise<LockHandle | undefined> {
    const lockDelayMs = this.prng.chance(0.7) ? 200 + this.prng.int(2_500) : 0;
    const waitTimeoutMs = this.prng.chance(0.4) ? 0 : 500 + this.prng.int(3_000);
    try {
      const h = waitTimeoutMs === 0 ? await s.tryAcquire(DELAYED_LOCK, { lockDelayMs }) : await s.acquire(DELAYED_LOCK, { waitTimeoutMs, lockDelayMs });
      if (h) this.hold(h);
      return h ?? undefined;
    } catch {
      return undefined;
    }
  }

  private async write(handle: LockHandle): Promise<void> {
    await handle.write([{ put: `${DELAYED_LOCK}/a`, value: `${this.name}#${++this.n}` }]).catch(() => undefined);
  }
}

/** Revokes the delayed lock or the election's, whoever holds it, at random. */
export class Admin extends FeatureActor {
  async run(stopAt: number): Promise<void> {
    while (this.actor.world.now < stopAt) {
      await this.sleep(500 + this.prng.int(3_000));
      const lock = this.prng.chance(0.7) ? DELAYED_LOCK : ELECTION;
      const r = await this.client.revokeLock(lock, { reason: 'simulated admin' }).catch(() => undefined);
      if (r) this.env.trace(`${this.name} revoked ${lock} token ${r.endedToken}`);
    }
    await this.close();
  }
}
