// AcquireAll: exclusive grants of several locks at once (issue 33, docs/architecture.md#atomic-multi-lock).
// Every lock free with nobody queued -> all granted by this entry, each with this entry's index as token;
// otherwise `held` when tryOnly, else ONE waiter queued in every lock's queue, granted whole (multiLocks.ts)
// when it heads all of them and all are free. The session never holds part of the set, so two callers naming
// the same locks in different orders cannot deadlock.
//
// Re-entry: the same set waiting answers its wait again; every named lock held by the session under one token
// answers that grant (newGrant false); any other overlap with what the session holds or waits for is refused
// SET_OVERLAP (a partial set would be granted otherwise, or a count kept: see docs/architecture.md#atomic-multi-lock).
import { checkOwner } from '../auth/access';
import { allows } from '../auth/permissions';
import * as L from '../limits';
import { queuePosition } from '../locks';
import { isFree } from '../multiLocks';
import { addHeld, addWaiting, hasWaiter, isDelayed, isHeld, lockCountOf, multiWaitOf, sharedGrantOf, tokenOf, waiterCount, type LockRecord, type MultiWait, type Session } from '../records';
import { Reason, refused, refusedAbout, type LockEvent, type RefusedResult } from '../results';
import { compareStrings } from '../text';
import { checkList, checkLockName, checkSessionId, isNonNegativeInt } from './checks';
import type { CommandEntry, MachineState, RequestMeta } from './entry';

export interface AcquireAllCommand extends RequestMeta {
  type: 'AcquireAll';
  /** Distinct lock names, 1..MAX_LOCKS_PER_ACQUIRE_ALL, in the caller's order (the grant does not depend on it). */
  locks: string[];
  sessionId: string;
  tryOnly: boolean;
  /** Informational (the node runs the timer): 0..MAX_WAIT_TIMEOUT_MS, 0 = try-lock. */
  waitTimeoutMs?: number;
}

type Answer = { status: 'granted'; token: number; newGrant: boolean } | { status: 'waiting'; holderToken: number; position: number } | { status: 'held'; holderToken: number } | RefusedResult;

export const acquireAll: CommandEntry<AcquireAllCommand, 'granted' | 'waiting' | 'held'> = {
  type: 'AcquireAll',
  kind: 'request',
  statuses: ['granted', 'waiting', 'held'],
  member: 'acquireAll',
  encode: (c) => ({ locks: c.locks, sessionId: c.sessionId, tryOnly: c.tryOnly, waitTimeoutMs: c.waitTimeoutMs ?? 0 }),
  decode: (b, meta) => ({ type: 'AcquireAll', ...meta, locks: b.strings('locks'), sessionId: b.str('sessionId'), tryOnly: b.bool('tryOnly'), waitTimeoutMs: b.num('waitTimeoutMs') }),
  validate(c) {
    const sessionProblem = checkSessionId(c.sessionId);
    if (sessionProblem !== null) return sessionProblem;
    if (typeof c.tryOnly !== 'boolean') return 'tryOnly must be a boolean';
    if (c.waitTimeoutMs !== undefined && (!isNonNegativeInt(c.waitTimeoutMs) || c.waitTimeoutMs > L.MAX_WAIT_TIMEOUT_MS)) {
      return `waitTimeoutMs must be an integer in [0, ${L.MAX_WAIT_TIMEOUT_MS}]`;
    }
    return checkList(c.locks, 'locks', L.MAX_LOCKS_PER_ACQUIRE_ALL, checkLockName) ?? checkDistinct(c.locks as string[]);
  },
  // Every name is checked before anything happens: a set is refused whole when any lock of it is not allowed.
  permit(p, c) {
    for (const name of c.locks) if (!allows(p.table, p.caller, 'lock', name)) return refusedAbout(Reason.PERMISSION_DENIED, `lock ${name}`);
    return checkOwner(p.caller, p.sessionOwner(c.sessionId));
  },
  execute(m, index, c, events) {
    const s = m.sessions.get(c.sessionId);
    if (s === undefined) return refused(Reason.UNKNOWN_SESSION, 0);
    const names = [...c.locks].sort(compareStrings);
    const found = names.map((name) => m.locks.get(name));
    const again = reentry(found, names, s);
    if (again !== null) return again;
    const blocker = found.find((rec) => rec !== undefined && !(isFree(rec) && rec.waiters === null));
    if (blocker === undefined) return grantAll(m, index, c, s, names, events);
    if (c.tryOnly) return isHeld(blocker) || !isDelayed(blocker) ? { status: 'held', holderToken: tokenOf(blocker) } : refused(Reason.LOCK_DELAYED, blocker.latestToken);
    return queueAll(m, c, s, names, tokenOf(blocker), events);
  },
};

/**
 * A record for a lock first named by a waiting set: it issued no token, so its latest is the forgotten
 * floor, and a write under an old token is classified as it was before the record existed.
 */
function firstNamed(m: MachineState, name: string): LockRecord {
  const rec = m.locks.create(name);
  m.locks.raiseLatest(rec, m.locks.gcFloor);
  return rec;
}

function checkDistinct(names: readonly string[]): string | null {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) return `locks must be distinct: ${JSON.stringify(name)} is named twice`;
    seen.add(name);
  }
  return null;
}

/** The answer when the session holds or waits for any named lock already; null when it touches none of them. */
function reentry(found: readonly (LockRecord | undefined)[], names: readonly string[], s: Session): Answer | null {
  const involved = found.find((rec) => rec !== undefined && (rec.holder === s || sharedGrantOf(rec, s) !== undefined || hasWaiter(rec, s)));
  if (involved === undefined) return null;
  const recs = found.filter((rec): rec is LockRecord => rec !== undefined);
  if (recs.length === names.length) {
    const wait = multiWaitOf(involved, s);
    if (wait !== undefined && wait.locks.length === recs.length && recs.every((rec) => multiWaitOf(rec, s) === wait)) {
      return { status: 'waiting', holderToken: 0, position: positionOf(wait) };
    }
    const token = tokenOf(involved);
    if (recs.every((rec) => rec.holder === s && tokenOf(rec) === token)) return { status: 'granted', token, newGrant: false };
  }
  return refusedAbout(Reason.SET_OVERLAP, involved.name);
}

/** The set's place: its furthest position in any of its queues. */
function positionOf(wait: MultiWait): number {
  return Math.max(...wait.locks.map((rec) => queuePosition(rec, wait.session.id)));
}

/** Checks the bounds a grant or a wait of `names.length` locks meets; the refusal, or null. */
function checkBounds(m: MachineState, s: Session, names: readonly string[], what: 'locks' | 'waiters'): RefusedResult | null {
  const permits = s.owner === '' ? 0 : m.semaphores.usedBy(s.owner, what);
  const used = (what === 'locks' ? (s.usage?.locks ?? 0) : (s.usage?.waiters ?? 0)) + permits;
  if (m.overQuota(s.owner, what, used, names.length)) return refusedAbout(Reason.QUOTA_EXCEEDED, what);
  if (lockCountOf(s) + m.semaphores.countOf(s) + names.length > L.MAX_LOCKS_PER_SESSION) return refused(Reason.TOO_MANY_LOCKS, 0);
  const creating = names.filter((name) => m.locks.get(name) === undefined).length;
  if (m.locks.size + creating > L.MAX_LOCKS) return refused(Reason.TOO_MANY_LOCKS, 0);
  return null;
}

function grantAll(m: MachineState, index: number, c: AcquireAllCommand, s: Session, names: readonly string[], events: LockEvent[]): Answer {
  const refusal = checkBounds(m, s, names, 'locks');
  if (refusal !== null) return refusal;
  for (const name of names) {
    const rec = m.locks.get(name) ?? m.locks.create(name);
    m.locks.grant(rec, s, index, c.now);
    addHeld(s, rec);
    events.push({ type: 'granted', lock: name, sessionId: s.id, token: index, cause: 'acquired' });
  }
  return { status: 'granted', token: index, newGrant: true };
}

function queueAll(m: MachineState, c: AcquireAllCommand, s: Session, names: readonly string[], holderToken: number, events: LockEvent[]): Answer {
  const refusal = checkBounds(m, s, names, 'waiters');
  if (refusal !== null) return refusal;
  const full = names.find((name) => (m.locks.get(name)?.waiters?.size ?? 0) >= L.MAX_WAITERS_PER_LOCK);
  if (full !== undefined) return refused(Reason.TOO_MANY_WAITERS, m.locks.get(full)?.latestToken ?? 0);
  const wait: MultiWait = { session: s, locks: names.map((name) => m.locks.get(name) ?? firstNamed(m, name)) };
  for (const rec of wait.locks) {
    m.locks.enqueueMulti(rec, wait, c.now);
    addWaiting(s, rec);
    events.push({ type: 'queued', lock: rec.name, sessionId: s.id, position: waiterCount(rec) });
  }
  return { status: 'waiting', holderToken, position: positionOf(wait) };
}
