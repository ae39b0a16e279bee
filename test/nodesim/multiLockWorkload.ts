/**
 * Issue 33's atomic multi-lock (AcquireAll) as applications use it: clients of locks `M0`..`M2`, each on the
 * real FenceLockClient of an actor of its own. Each round an actor takes two or three of them at once, named
 * in an order of its own (waiting, or trying once), writes under one of its grants, then releases them one by
 * one or lets its session expire. The lease checks read which locks each believes it holds (simulation.ts);
 * multiLockChecks.ts checks that each set is granted whole.
 */
import type { LockHandle, Session } from '../../src/client/session';
import { FeatureActor, type FeatureEnv } from './featureWorkload';
import type { Prng } from '../support/prng';
import type { Actor } from './world';

/** The locks the sets are taken from. */
export const MULTI_LOCKS: readonly string[] = ['M0', 'M1', 'M2'];

export interface MultiLockEnv extends FeatureEnv {
  /** The session is about to ask for `locks` as one set: only a set some request named may be granted. */
  setAsked(sessionId: string, locks: readonly string[]): void;
}

export class SetHolder extends FeatureActor {
  private session: Session | undefined;
  /** The grants of the set it holds, those not yet released. */
  private handles: LockHandle[] = [];

  constructor(name: string, actor: Actor, private readonly multiEnv: MultiLockEnv, prng: Prng, random: Prng) {
    super(name, actor, multiEnv, prng, random);
  }

  async run(stopAt: number): Promise<void> {
    while (this.actor.world.now < stopAt) {
      const s = await this.open();
      const handles = s === undefined ? undefined : await this.acquire(s);
      if (s === undefined || handles === undefined) {
        await this.sleep(50 + this.prng.int(300));
        continue;
      }
      await this.write(this.prng.pick(handles));
      await this.sleep(this.prng.int(3_000));
      if (this.prng.chance(0.15)) {
        this.handles = [];
        s.abandon('the simulated application lets its session expire');
        this.session = undefined;
        continue;
      }
      // Each grant of the set is released on its own; the belief in each ends before its release is sent.
      for (const h of this.prng.shuffle([...handles])) {
        this.handles = this.handles.filter((x) => x !== h);
        await h.release().catch(() => undefined);
      }
    }
    await this.close();
  }

  override believes(lock: string): number | undefined {
    const h = this.handles.find((x) => x.name === lock);
    if (!h || !h.isHeld() || h.isPresumedLost()) return undefined;
    return Number(h.token);
  }

  override sessionOf(lock: string): string | undefined {
    return this.handles.find((x) => x.name === lock)?.session.id;
  }

  override handleOf(lock: string, token: number): LockHandle | undefined {
    return this.handles.find((x) => x.name === lock && Number(x.token) === token);
  }

  private async open(): Promise<Session | undefined> {
    if (this.session && !this.session.isLost() && !this.session.isClosed()) return this.session;
    this.session = await this.client.openSession({ ttlMs: this.env.ttlMs }).catch(() => undefined);
    return this.session;
  }

  /** Two or three of the locks, in an order of its own. */
  private async acquire(s: Session): Promise<LockHandle[] | undefined> {
    const locks = this.prng.shuffle([...MULTI_LOCKS]).slice(0, this.prng.chance(0.5) ? 2 : 3);
    const waitTimeoutMs = this.prng.chance(0.3) ? 0 : 300 + this.prng.int(3_000);
    this.multiEnv.setAsked(s.id, locks);
    try {
      const handles = waitTimeoutMs === 0 ? await s.tryAcquireAll(locks) : await s.acquireAll(locks, { waitTimeoutMs });
      if (!handles) return undefined;
      this.handles = handles;
      for (const h of handles) this.env.beliefStarted(this, h.name, Number(h.token));
      return handles;
    } catch {
      return undefined;
    }
  }

  private async write(handle: LockHandle): Promise<void> {
    await handle.write([{ put: `${handle.name}/a`, value: `${this.name}#${++this.n}` }]).catch(() => undefined);
  }
}
