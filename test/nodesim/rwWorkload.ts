/**
 * Issue 33's read-write locks as applications use them: readers and writers of lock `RW`, each on the real
 * FenceLockClient of an actor of its own. Each round an actor takes `RW` shared (a reader) or exclusive (a
 * writer), waiting or trying; a writer writes under its grant, a reader now and then tries to (the cluster
 * must refuse it SHARED_GRANT); then it releases, or lets its session expire. The lease checks read which
 * mode each believes it holds (simulation.ts); rwChecks.ts checks the rest.
 */
import type { LockHandle, Session } from '../../src/client/session';
import type { LockMode } from '../../src/client/types';
import { FeatureActor } from './featureWorkload';

/** The lock the readers and writers share. */
export const RW_LOCK = 'RW';

export class RwActor extends FeatureActor {
  private session: Session | undefined;
  /** The mode of the grant in `held` (set before the grant is believed). */
  private mode: LockMode = 'exclusive';

  async run(stopAt: number): Promise<void> {
    while (this.actor.world.now < stopAt) {
      const s = await this.open();
      if (!s) {
        await this.sleep(100 + this.prng.int(300));
        continue;
      }
      this.mode = this.prng.chance(0.6) ? 'shared' : 'exclusive';
      const handle = await this.acquire(s);
      if (!handle) {
        await this.sleep(50 + this.prng.int(300));
        continue;
      }
      // A reader's write must be refused: it tries now and then, to show that the cluster does.
      if (this.mode === 'exclusive' || this.prng.chance(0.3)) await this.write(handle);
      await this.sleep(this.prng.int(3_000));
      if (this.mode === 'exclusive' && this.prng.chance(0.5)) await this.write(handle);
      this.held = undefined;
      if (this.prng.chance(0.15)) {
        s.abandon('the simulated application lets its session expire');
        this.session = undefined;
      } else {
        await handle.release().catch(() => undefined);
      }
    }
    await this.close();
  }

  /** Whether the grant it believes it holds of `lock` is a shared one. */
  believesShared(lock: string): boolean {
    return this.believes(lock) !== undefined && this.mode === 'shared';
  }

  private async open(): Promise<Session | undefined> {
    if (this.session && !this.session.isLost() && !this.session.isClosed()) return this.session;
    this.session = await this.client.openSession({ ttlMs: this.env.ttlMs }).catch(() => undefined);
    return this.session;
  }

  private async acquire(s: Session): Promise<LockHandle | undefined> {
    const waitTimeoutMs = this.prng.chance(0.3) ? 0 : 300 + this.prng.int(3_000);
    try {
      const h = waitTimeoutMs === 0 ? await s.tryAcquire(RW_LOCK, { mode: this.mode }) : await s.acquire(RW_LOCK, { waitTimeoutMs, mode: this.mode });
      if (h) this.hold(h);
      return h ?? undefined;
    } catch {
      return undefined;
    }
  }

  private async write(handle: LockHandle): Promise<void> {
    await handle.write([{ put: `${RW_LOCK}/a`, value: `${this.name}#${++this.n}` }]).catch(() => undefined);
  }
}
