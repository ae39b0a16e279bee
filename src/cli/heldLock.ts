// What `fencelock lock` does while it holds a lock, with or without CMD: notice its loss, then release it and
// close the session.
import { performance } from 'node:perf_hooks';
import { isFenceLockError, type FenceLockClient, type LockHandle, type Session } from '../client';
import type { CliIO } from './output';
import { withoutGrpcNoise } from './unreachable';

/** What the CLI needs of a held grant: a lock's (LockHandle) or a semaphore permit's (PermitHandle). */
export type HeldGrantHandle = Pick<LockHandle, 'token' | 'isPresumedLost' | 'presumedLostAt' | 'onLost' | 'release'>;

/**
 * Calls `onLoss` once with why, when the lock is presumed lost (no renewal acknowledged for TTL minus the
 * safety margin), the session is lost (expired, revoked), or the grant alone is (an admin's Lock.Revoke).
 * Returns the stop, for when the hold ends.
 */
export function watchForLoss(session: Session, lock: HeldGrantHandle, onLoss: (why: string) => void): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const lost = (why: string): void => {
    if (stopped) return;
    stopped = true;
    if (timer) clearTimeout(timer);
    onLoss(why);
  };
  // Re-check at the presumed-lost moment; renewals keep pushing it later.
  const check = (): void => {
    timer = undefined;
    if (stopped) return;
    if (lock.isPresumedLost()) {
      lost('is presumed lost (no renewal acknowledged in time)');
      return;
    }
    const wait = Math.min(1_000, Math.max(5, lock.presumedLostAt() - performance.now()));
    timer = setTimeout(check, wait);
  };
  check();
  session.onLost((err) => lost(`was lost: ${err.message}`));
  // An admin's revoke (learnt from a renewal) or a refused fenced write ends the grant, not the session.
  lock.onLost((err) => lost(`${err.reason === 'REVOKED' ? 'was revoked' : 'was lost'}: ${err.message}`));
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}

/** What messages call the grant: `lock "a"`, or `locks "a", "b"` for a set taken at once (lockSet.ts). */
export function grantSubject(names: readonly string[]): string {
  return `${names.length === 1 ? 'lock' : 'locks'} ${names.map((n) => JSON.stringify(n)).join(', ')}`;
}

/** The grant in `--json` output: `{"lock"}` as before for one lock, `{"locks":[...]}` (in the order given) for a set. */
export function locksJson(names: readonly string[]): { lock: string } | { locks: string[] } {
  return names.length === 1 ? { lock: names[0] ?? '' } : { locks: [...names] };
}

/**
 * Releases the lock (unless it is already known lost) and closes the session and the client. Resolves to why
 * the lock was lost, `lostWhy` or found at release, or undefined when it was held to the end. `subject`
 * names the grant in messages (grantSubject).
 */
export async function releaseAndClose(
  subject: string,
  io: CliIO,
  opts: { json: boolean; ttlMs: number },
  held: { session: Session; lock: HeldGrantHandle; client: FenceLockClient },
  lostWhy: string | undefined,
): Promise<string | undefined> {
  const { session, lock, client } = held;
  let why = lostWhy;
  if (why === undefined && lock.isPresumedLost()) why = 'was presumed lost before its release';
  if (why === undefined) {
    try {
      await lock.release();
    } catch (err) {
      if (isFenceLockError(err, 'FAILED_PRECONDITION') || isFenceLockError(err, 'NOT_FOUND')) {
        why = `was no longer held at release: ${(err as Error).message}`;
        if (!opts.json) io.stderr(`fencelock: ${subject} ${why}\n`);
      } else {
        io.stderr(`fencelock: warning: release failed (${withoutGrpcNoise((err as Error).message)}); the lock is freed when the session closes or expires\n`);
      }
    }
  }
  try {
    // After a loss the leader is likely unreachable: do not hold the exit up for long.
    await session.close(why !== undefined ? { timeoutMs: 2_000 } : {});
  } catch (err) {
    io.stderr(`fencelock: warning: closing the session failed (${withoutGrpcNoise((err as Error).message)}); it expires after ${opts.ttlMs} ms\n`);
  }
  await client.close().catch(() => undefined);
  return why;
}
