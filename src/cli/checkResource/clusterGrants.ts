// The real tokens of check-resource: grants of the user's lock (and of another lock) taken from the cluster
// through two sessions, as two holders one after the other would get them.
import { DEFAULT_TTL_MS, type FenceLockClient, type LockHandle, type Session } from '../../client';
import type { Grants } from '../../fencing/check/grants';
import { cliSessionName } from '../sessionName';

export class ClusterGrants implements Grants {
  private readonly sessions: Session[] = [];
  private held: { session: Session; handle: LockHandle } | undefined;

  constructor(
    private readonly client: FenceLockClient,
    readonly lock: string,
    private readonly otherLockName: string,
    /** How long to wait for a lock someone else holds. */
    private readonly waitMs: number,
  ) {}

  private async session(): Promise<Session> {
    const s = await this.client.openSession({ ttlMs: DEFAULT_TTL_MS, name: cliSessionName(`fencelock check-resource ${this.lock}`, process.pid) });
    this.sessions.push(s);
    return s;
  }

  async twoGrants(): Promise<{ older: bigint; newer: bigint }> {
    const first = await this.session();
    const a = await first.acquire(this.lock, { waitTimeoutMs: this.waitMs });
    await a.release();
    await first.close();
    const second = await this.session();
    const b = await second.acquire(this.lock, { waitTimeoutMs: this.waitMs });
    this.held = { session: second, handle: b };
    return { older: a.token, newer: b.token };
  }

  /** Held until close, so that the token is a current grant of the other lock (a proxy that asks the cluster accepts it as issued). */
  async otherLock(): Promise<{ lock: string; token: bigint }> {
    const s = this.held?.session ?? (await this.session());
    const h = await s.acquire(this.otherLockName, { waitTimeoutMs: this.waitMs });
    return { lock: this.otherLockName, token: h.token };
  }

  async latestToken(): Promise<bigint> {
    return (await this.client.describe(this.lock)).latestToken;
  }

  async nextGrant(): Promise<bigint> {
    if (!this.held) throw new Error('check-resource: nextGrant before twoGrants');
    await this.held.handle.release();
    const h = await this.held.session.acquire(this.lock, { waitTimeoutMs: this.waitMs });
    this.held = { session: this.held.session, handle: h };
    return h.token;
  }

  /** Closing the sessions releases whatever they still hold. */
  async close(): Promise<void> {
    await Promise.all(this.sessions.map((s) => s.close().catch(() => undefined)));
  }
}
