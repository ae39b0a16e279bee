// `fencelock lock A B C -- CMD` (issue 33): several locks taken at once with Lock.AcquireAll
// (docs/architecture.md#atomic-multi-lock) and held by the CLI as one grant.
import { isFenceLockError, type FenceLockClient, type FenceLockError, type LockHandle, type Session } from '../client';
import { MAX_LOCKS_PER_ACQUIRE_ALL } from '../protocol/limits';
import { CommandFailure, EXIT, UsageError } from './exitCodes';
import type { HeldGrantHandle } from './heldLock';
import { clientOf } from './output';

/**
 * The locks of one AcquireAll as the one grant watchForLoss and releaseAndClose watch and end: the set's
 * token (the same for every lock), lost as soon as any lock of it is (an admin may revoke one alone: CMD
 * must not go on with part of the set), released lock by lock.
 */
export class LockSetGrant implements HeldGrantHandle {
  readonly token: bigint;

  constructor(readonly handles: readonly LockHandle[]) {
    this.token = handles[0]?.token ?? 0n;
  }

  isPresumedLost(): boolean {
    return this.handles.some((h) => h.isPresumedLost());
  }

  presumedLostAt(): number {
    return Math.min(...this.handles.map((h) => h.presumedLostAt()));
  }

  /** Once, for the first lock of the set known lost. */
  onLost(cb: (err: FenceLockError) => void): void {
    let told = false;
    for (const h of this.handles) {
      h.onLost((err) => {
        if (told) return;
        told = true;
        cb(err);
      });
    }
  }

  /** Every lock is released even when one release fails; then the first failure is thrown. */
  async release(): Promise<void> {
    const results = await Promise.allSettled(this.handles.map((h) => h.release()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

/**
 * Takes every lock of `names` in one grant: waits up to waitMs; with 0 one try, which fails LOCK_HELD (exit 3,
 * as a held single lock) naming a busy lock of the set, or LOCK_DELAYED while one is in its lock-delay.
 */
export async function takeLockSet(client: FenceLockClient, session: Session, names: readonly string[], waitMs: number, notRun: string): Promise<LockSetGrant> {
  if (waitMs > 0) return new LockSetGrant(await session.acquireAll(names, { waitTimeoutMs: waitMs }));
  const got = await session.tryAcquireAll(names).catch((err: unknown) => {
    if (isFenceLockError(err) && err.reason === 'LOCK_DELAYED') throw new CommandFailure('LOCK_DELAYED', `${err.details ?? err.message}${notRun}`, EXIT.UNAVAILABLE);
    throw err;
  });
  if (got !== null) return new LockSetGrant(got);
  throw new CommandFailure('LOCK_HELD', `${await busyLockOf(client, names)} (--wait 0)${notRun}`, EXIT.UNAVAILABLE);
}

/**
 * Which lock of the set kept it from being granted, as describe shows it now. The try answers only "not
 * granted", and by the time of the describe the lock may be free again: then the message says so.
 */
async function busyLockOf(client: FenceLockClient, names: readonly string[]): Promise<string> {
  const described = await Promise.all(names.map((n) => client.describe(n).catch(() => undefined)));
  const ofSet = `of the set ${names.map((n) => JSON.stringify(n)).join(', ')}`;
  for (const d of described) {
    if (d?.holder != null) return `lock ${JSON.stringify(d.lock)} ${ofSet} is held by session ${d.holder.handle} (${clientOf(d.holder)})`;
    if (d?.held === true) return `lock ${JSON.stringify(d.lock)} ${ofSet} is held by another session`;
    if (d !== undefined && d.sharedHolders.length > 0) return `lock ${JSON.stringify(d.lock)} ${ofSet} is held shared by ${d.sharedHolders.length} session(s)`;
  }
  for (const d of described) {
    if (d !== undefined && d.delayedUntilMs > 0) return `lock ${JSON.stringify(d.lock)} ${ofSet} is in its lock-delay`;
    if (d !== undefined && d.waiters.length > 0) return `lock ${JSON.stringify(d.lock)} ${ofSet} has ${d.waiters.length} waiter(s)`;
  }
  return `a lock ${ofSet} was busy (it may be free by now)`;
}

/**
 * Refuses, as usage errors, what a set cannot be: a semaphore (--permits), shared grants (--shared) or a
 * lock-delay (AcquireAll grants exclusive locks only, with none), a name twice, more names than one
 * AcquireAll takes, a name FENCELOCK_LOCKS could not list (one a line).
 */
export function checkLockSetUsage(names: readonly string[], opts: { permits?: number; shared?: boolean; lockDelayGiven: boolean }): void {
  if (names.length < 2) return;
  const several = `several names (${names.length}) are taken at once as exclusive locks (AcquireAll)`;
  if (opts.permits !== undefined) throw new UsageError(`lock: --permits takes one semaphore NAME; ${several}`);
  if (opts.shared === true) throw new UsageError(`lock: --shared takes one NAME; ${several}`);
  if (opts.lockDelayGiven) throw new UsageError(`lock: --lock-delay takes one NAME; ${several}, with no lock-delay`);
  if (names.length > MAX_LOCKS_PER_ACQUIRE_ALL) throw new UsageError(`lock: at most ${MAX_LOCKS_PER_ACQUIRE_ALL} names at once, got ${names.length}`);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw new UsageError(`lock: NAME ${JSON.stringify(twice)} is given twice`);
  const multiline = names.find((n) => n.includes('\n'));
  if (multiline !== undefined) throw new UsageError(`lock: NAME ${JSON.stringify(multiline)} has a newline, so FENCELOCK_LOCKS (one name a line) could not list it; take it alone`);
}
