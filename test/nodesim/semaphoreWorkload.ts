/**
 * Issue 33's semaphores as applications use them: holders of permits of semaphore `S` (2 or 3 permits, the
 * same for every holder of a run), each on the real FenceLockClient of an actor of its own. Each round an
 * actor takes a permit, waiting in the queue or trying once, writes under its slot (PermitHandle.write, a key
 * of that slot's own), then releases the permit or lets its session expire. semaphoreChecks.ts reads what
 * each believes it holds.
 */
import type { PermitHandle } from '../../src/client/permit';
import type { Session } from '../../src/client/session';
import { FeatureActor, type FeatureEnv } from './featureWorkload';
import type { Prng } from '../support/prng';
import type { Actor } from './world';

/** The semaphore every permit holder shares. */
export const SEMAPHORE = 'S';

/** What the permit checks read off a holder: the permit it believes it holds. */
export interface PermitBeliever {
  readonly name: string;
  /** The token of the permit of `slot` of `semaphore` it believes it holds (undefined: none). */
  believesPermit(semaphore: string, slot: number): number | undefined;
  /** The session its believed permit is under. */
  permitSession(): string | undefined;
}

export interface PermitEnv extends FeatureEnv {
  /** The holder started believing it holds a permit: the per-slot lease check reads it at once. */
  permitBeliefStarted(holder: PermitBeliever, semaphore: string, slot: number, token: number): void;
}

export class PermitHolder extends FeatureActor implements PermitBeliever {
  private session: Session | undefined;
  private permit: PermitHandle | undefined;

  constructor(name: string, actor: Actor, private readonly permitEnv: PermitEnv, prng: Prng, random: Prng, private readonly permits: number) {
    super(name, actor, permitEnv, prng, random);
  }

  async run(stopAt: number): Promise<void> {
    while (this.actor.world.now < stopAt) {
      const s = await this.open();
      const permit = s === undefined ? undefined : await this.acquire(s);
      if (s === undefined || permit === undefined) {
        await this.sleep(50 + this.prng.int(300));
        continue;
      }
      await this.write(permit);
      await this.sleep(this.prng.int(3_000));
      if (this.prng.chance(0.5)) await this.write(permit);
      // The belief ends before the release is sent: the server may hand the slot on before its answer arrives.
      this.permit = undefined;
      if (this.prng.chance(0.15)) {
        s.abandon('the simulated application lets its session expire');
        this.session = undefined;
      } else {
        await permit.release().catch(() => undefined);
      }
    }
    await this.close();
  }

  believesPermit(semaphore: string, slot: number): number | undefined {
    const p = this.permit;
    if (!p || p.name !== semaphore || p.slot !== slot || p.isPresumedLost()) return undefined;
    return Number(p.token);
  }

  permitSession(): string | undefined {
    return this.permit?.session.id;
  }

  private async open(): Promise<Session | undefined> {
    if (this.session && !this.session.isLost() && !this.session.isClosed()) return this.session;
    this.session = await this.client.openSession({ ttlMs: this.env.ttlMs }).catch(() => undefined);
    return this.session;
  }

  private async acquire(s: Session): Promise<PermitHandle | undefined> {
    const waitTimeoutMs = this.prng.chance(0.3) ? 0 : 300 + this.prng.int(3_000);
    try {
      const p = waitTimeoutMs === 0 ? await s.tryAcquirePermit(SEMAPHORE, { permits: this.permits }) : await s.acquirePermit(SEMAPHORE, { permits: this.permits, waitTimeoutMs });
      if (!p) return undefined;
      this.permit = p;
      this.permitEnv.permitBeliefStarted(this, p.name, p.slot, Number(p.token));
      return p;
    } catch {
      return undefined;
    }
  }

  /** A key of the slot's own: keys are bound to the slot that first wrote them. */
  private async write(permit: PermitHandle): Promise<void> {
    await permit.write([{ put: `${SEMAPHORE}/${permit.slot}`, value: `${this.name}#${++this.n}` }]).catch(() => undefined);
  }
}
