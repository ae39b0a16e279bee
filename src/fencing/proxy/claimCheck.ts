// The proxy faces clients it does not trust, so a claim is believed only for a token the cluster has issued to
// that lock: token <= the lock's latest token. Otherwise anyone could bind an unused resource to a made-up lock
// with token 2^63-1 and nobody could write it again. Latest tokens only grow, so a cached one is a safe lower
// bound: a token at or below it passes without asking; a token above it asks the cluster once more.
// A semaphore's permit claims the resource of its slot (`SEMAPHORE#SLOT`): its token is judged against that
// slot's latest token, and also against a lock of that very name, which shares the resource downstream.
import { parseSlotResource } from '../../protocol/fencingHeaders';
import type { CheckedClaim } from '../token';

/** What the proxy needs of the cluster: FenceLockClient's describe and describeSemaphore fit. */
export interface LockDescriber {
  describe(lock: string): Promise<{ latestToken: bigint }>;
  describeSemaphore(name: string): Promise<{ slotTokens: bigint[] }>;
}

/** A name the cluster refuses (INVALID_ARGUMENT) cannot be a lock or semaphore that issued a token: none issued. */
function noneIfRefusedName(err: unknown): bigint {
  if ((err as { code?: unknown }).code === 'INVALID_ARGUMENT') return 0n;
  throw err;
}

export type ClaimVerdict = { ok: true } | { ok: false; status: 409; error: 'WRONG_LOCK'; message: string } | { ok: false; status: 503; error: 'CLUSTER_UNAVAILABLE'; message: string };

/** How many locks' latest tokens are cached (least recently used dropped first); a bound, not a tuning knob. */
export const CACHED_LOCKS = 10_000;
/** At most this many Describe calls at once: a flood of made-up claims must not become a flood at the cluster. */
export const ASKING_AT_MOST = 64;

export class ClusterClaimCheck {
  private readonly latest = new Map<string, bigint>();
  private readonly asking = new Map<string, Promise<bigint>>();

  constructor(private readonly cluster: LockDescriber) {}

  async check(claim: CheckedClaim): Promise<ClaimVerdict> {
    const cached = this.latest.get(claim.lock);
    if (cached !== undefined && claim.token <= cached) {
      this.remember(claim.lock, cached);
      return { ok: true };
    }
    if (!this.asking.has(claim.lock) && this.asking.size >= ASKING_AT_MOST) {
      return { ok: false, status: 503, error: 'CLUSTER_UNAVAILABLE', message: `the proxy is checking ${ASKING_AT_MOST} claims with the cluster already; nothing was forwarded, retry later` };
    }
    let fresh: bigint;
    try {
      fresh = await this.ask(claim.lock);
    } catch (err) {
      return { ok: false, status: 503, error: 'CLUSTER_UNAVAILABLE', message: `cannot check the claim with the fencelock cluster (${(err as Error).message}); nothing was forwarded, retry later` };
    }
    return claim.token <= fresh ? { ok: true } : this.wrongLock(claim, fresh === 0n);
  }

  private wrongLock(claim: CheckedClaim, unknown = false): ClaimVerdict {
    // The cluster forgets a lock that is idle and owns no keys (latest token 0): nobody holds it, so no write
    // under it is due; the refusal says so rather than calling the token made up.
    const why = unknown ? `the cluster knows no token of lock ${JSON.stringify(claim.lock)} (never granted, or idle and forgotten; for a semaphore's slot SEMAPHORE#SLOT, no token of that slot)` : `the cluster has issued no token ${claim.token} for lock ${JSON.stringify(claim.lock)}`;
    return { ok: false, status: 409, error: 'WRONG_LOCK', message: `${why}: a claim must carry a token the lock was granted` };
  }

  /** One Describe per lock at a time; concurrent claims for the same lock share it. */
  private ask(lock: string): Promise<bigint> {
    const pending = this.asking.get(lock);
    if (pending) return pending;
    const p = this.latestIssued(lock)
      .then((latest) => {
        this.remember(lock, latest);
        return latest;
      })
      .finally(() => this.asking.delete(lock));
    this.asking.set(lock, p);
    return p;
  }

  /** The latest token issued for the resource: of the lock of that name, and of the slot it names if it names one. */
  private async latestIssued(resource: string): Promise<bigint> {
    const slot = parseSlotResource(resource);
    const [ofLock, ofSlot] = await Promise.all([
      this.cluster.describe(resource).then((d) => d.latestToken, noneIfRefusedName),
      slot === undefined ? 0n : this.cluster.describeSemaphore(slot.semaphore).then((d) => d.slotTokens[slot.slot] ?? 0n, noneIfRefusedName),
    ]);
    return ofLock > ofSlot ? ofLock : ofSlot;
  }

  private remember(lock: string, token: bigint): void {
    const known = this.latest.get(lock);
    this.latest.delete(lock);
    this.latest.set(lock, known !== undefined && known > token ? known : token);
    if (this.latest.size > CACHED_LOCKS) this.latest.delete(this.latest.keys().next().value as string);
  }
}
