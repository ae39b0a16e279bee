// The sequential model of ONE lock (or one semaphore slot, see projection.ts) and the fenced keys bound to
// it, for the linearizability checker. The rules and why each is sound are in the header of
// linearizability.ts ("The model"; shared grants: "Read-write locks").
import type { KeyWrite, Operation } from './history';

export interface KeyState {
  /** null: never written, or deleted (a tombstone keeps its watermark). */
  readonly value: string | null;
  readonly wm: bigint;
}

export interface LockState {
  /** The session of the last grant not known to have ended (see "expiry" in linearizability.ts). */
  readonly holder: string | null;
  /** The holder's token; null when it came from an acquire with an unknown outcome (not revealed yet). */
  readonly token: bigint | null;
  /** The highest token known to have been issued (exact when pending = 0, else a lower bound). */
  readonly latest: bigint;
  /** Exclusive grants with unknown tokens linearized since `latest`: each is above the previous one. */
  readonly pending: number;
  /** Shared grants not known to have ended: session -> token (null: unknown outcome, not revealed yet). */
  readonly shared: ReadonlyMap<string, bigint | null>;
  /** The grant at `latest` was shared (so another shared grant of the same entry may carry the same token). */
  readonly latestShared: boolean;
  /**
   * A shared grant of unknown outcome was linearized since `latest`: some token above it may have been
   * issued. It does not raise the bound for later tokens (readers of one entry share a token, and one
   * Expire entry may end them all and grant the next writer at latest + 1), it only admits STALE_TOKEN.
   */
  readonly sharedPending: boolean;
  readonly kv: ReadonlyMap<string, KeyState>;
  /**
   * Canonical text of the state without `pending` (which only says whether it is 0), for memoization: a state
   * that differs only by a smaller non-zero `pending` allows everything the other allows (see dominance in
   * linearizability.ts).
   */
  readonly key: string;
}

const NEVER: KeyState = { value: null, wm: 0n };

interface SharedPart {
  readonly shared: ReadonlyMap<string, bigint | null>;
  readonly latestShared: boolean;
  readonly sharedPending: boolean;
}

const NO_SHARED: SharedPart = { shared: new Map(), latestShared: false, sharedPending: false };

function make(holder: string | null, token: bigint | null, latest: bigint, pending: number, kv: ReadonlyMap<string, KeyState>, sh: SharedPart = NO_SHARED): LockState {
  let key = `${holder ?? ''}|${holder === null ? '' : token === null ? '?' : token.toString()}|${latest}|${pending > 0 ? '+' : '0'}`;
  if (sh.shared.size > 0 || sh.latestShared || sh.sharedPending) {
    key += `|r${sh.latestShared ? 'L' : ''}${sh.sharedPending ? 'P' : ''}`;
    for (const sess of [...sh.shared.keys()].sort()) key += `,${sess}=${sh.shared.get(sess) ?? '?'}`;
  }
  if (kv.size > 0) {
    const names = kv.size === 1 ? [...kv.keys()] : [...kv.keys()].sort();
    for (const k of names) {
      const s = kv.get(k)!;
      key += `|${k}=${s.value === null ? '\u0000' : JSON.stringify(s.value)}@${s.wm}`;
    }
  }
  return { holder, token, latest, pending, kv, key, shared: sh.shared, latestShared: sh.latestShared, sharedPending: sh.sharedPending };
}

/** Rebuilds `s` with some fields changed (the memo key follows). */
function with_(s: LockState, c: Partial<Omit<LockState, 'key'>>): LockState {
  const v = { ...s, ...c };
  return make(v.holder, v.token, v.latest, v.pending, v.kv, v);
}

export const INITIAL: LockState = make(null, null, 0n, 0, new Map());

const free = (s: LockState): LockState => (s.holder === null ? s : with_(s, { holder: null, token: null }));

/** The shared grants end (an exclusive grant needs them over: lazily, as expiry in linearizability.ts). */
const endShared = (s: LockState): SharedPart => ({ shared: new Map(), latestShared: false, sharedPending: s.sharedPending });

function withoutShared(s: LockState, session: string): LockState {
  if (!s.shared.has(session)) return s;
  const shared = new Map(s.shared);
  shared.delete(session);
  return with_(s, { shared });
}

function withShared(s: LockState, session: string, token: bigint | null): Map<string, bigint | null> {
  const shared = new Map(s.shared);
  shared.set(session, token);
  return shared;
}

/** The smallest token an acquire with an unknown outcome, linearized now, could have been granted. */
const minUnknownToken = (s: LockState): bigint => s.latest + BigInt(s.pending);

/** True when `session` may hold the lock under `token` now (an unrevealed token may be any value >= its bound). */
function holds(s: LockState, session: string, token: bigint): boolean {
  if (s.holder !== session) return false;
  if (s.token === null) return token >= minUnknownToken(s) && token > s.latest;
  return s.token === token;
}

/** The holder's token is now known to be `token` (no-op when it was known). */
function reveal(s: LockState, token: bigint): LockState {
  return s.token === null ? make(s.holder, token, token, 0, s.kv, { shared: s.shared, latestShared: false, sharedPending: false }) : s;
}

function watermarksAtMost(s: LockState, writes: readonly KeyWrite[], token: bigint): boolean {
  for (const w of writes) if ((s.kv.get(w.key) ?? NEVER).wm > token) return false;
  return true;
}

function applyWrites(s: LockState, writes: readonly KeyWrite[], token: bigint): LockState {
  const kv = new Map(s.kv);
  for (const w of writes) kv.set(w.key, { value: w.value, wm: token });
  return with_(s, { kv });
}

/** A write's refusal: the token is the session's live shared grant (shared grants never write). */
const SHARED_GRANT = 'SHARED_GRANT';

const isShared = (o: Operation): boolean => o.args.mode === 'shared';

/** Refusal reasons of a write that say "the grant (lock, token, session) is over", or was never this session's. */
const GRANT_OVER_WRITE = new Set(['LOCK_NOT_HELD', 'UNKNOWN_SESSION', 'NOT_HOLDER']);
const GRANT_OVER_RELEASE = new Set(['NOT_HOLDER', 'UNKNOWN_SESSION']);

/**
 * Whether the model uses this operation at all: operations it would step as the identity (a refusal that says
 * nothing about the lock, a failed or unknown read, open and keepalive) are left out of the search.
 */
export function isRelevant(o: Operation): boolean {
  const reason = o.error?.reason;
  switch (o.op) {
    case 'acquire':
      // A shared try refused says little: it also waits behind a queued writer while readers hold the lock.
      return o.outcome !== 'fail' || (reason === 'LOCK_HELD' && !isShared(o));
    case 'release':
      return o.outcome !== 'fail' || (reason !== undefined && (GRANT_OVER_RELEASE.has(reason) || reason === 'WRONG_TOKEN'));
    case 'write':
      return o.outcome !== 'fail' || (reason !== undefined && (GRANT_OVER_WRITE.has(reason) || reason === 'STALE_TOKEN' || reason === SHARED_GRANT));
    case 'get':
      return o.outcome === 'ok';
    case 'close':
      return o.outcome !== 'fail';
    default:
      return false;
  }
}

/**
 * True when, wherever `step` leaves the state unchanged for `o`, it always will (in every later state it is
 * either unchanged or impossible): reads, acquires (re-entrant, or refused as held), STALE_TOKEN and
 * WRONG_TOKEN refusals. The search may then linearize `o` at once (refinement 2 in linearizability.ts). Not
 * so for "grant over" refusals and closes: they leave the state alone while the session holds nothing, but
 * would free the lock if it held it later.
 */
export function idleIsStable(o: Operation): boolean {
  switch (o.op) {
    case 'get':
    case 'acquire':
      return true;
    case 'write':
      return o.outcome === 'fail' && (o.error?.reason === 'STALE_TOKEN' || o.error?.reason === SHARED_GRANT);
    case 'release':
      return o.outcome === 'fail' && o.error?.reason === 'WRONG_TOKEN';
    default:
      return false;
  }
}

/**
 * One step of the sequential model: the state after `o` takes effect now, or undefined when `o` (with its
 * recorded outcome) is impossible in state `s`. For an operation with an unknown outcome this is the state
 * after it took effect successfully; "it did not take effect" is the search leaving it out.
 */
export function step(s: LockState, o: Operation): LockState | undefined {
  const a = o.args;
  switch (o.op) {
    case 'acquire':
      return isShared(o) ? stepSharedAcquire(s, o) : stepExclusiveAcquire(s, o);
    case 'release': {
      if (isShared(o)) return stepSharedRelease(s, o);
      const session = a.session!;
      const t = a.token!;
      if (o.outcome === 'ok' || o.outcome === 'unknown') return holds(s, session, t) ? free(reveal(s, t)) : undefined;
      const reason = o.error?.reason ?? '';
      if (GRANT_OVER_RELEASE.has(reason)) return s.holder === session ? free(s) : s;
      if (reason === 'WRONG_TOKEN') return s.holder === session && s.token !== t ? s : undefined;
      return s;
    }
    case 'write': {
      const session = a.session!;
      const t = a.token!;
      const writes = a.writes!;
      if (o.outcome === 'ok' || o.outcome === 'unknown') {
        if (!holds(s, session, t) || !watermarksAtMost(s, writes, t)) return undefined;
        return applyWrites(reveal(s, t), writes, t);
      }
      const reason = o.error?.reason ?? '';
      if (reason === 'STALE_TOKEN') {
        // A newer grant exists (token below the latest; an unrevealed grant may be anything above its bound),
        // or a touched key carries a higher watermark.
        return s.pending > 0 || s.sharedPending || t < s.latest || !watermarksAtMost(s, writes, t) ? s : undefined;
      }
      if (reason === SHARED_GRANT) return holdsShared(s, session, t) ? s : undefined;
      if (GRANT_OVER_WRITE.has(reason)) {
        if (holds(s, session, t)) return free(s);
        return s.shared.get(session) === t ? withoutShared(s, session) : s;
      }
      return s;
    }
    case 'get': {
      const r = o.result!;
      const k = s.kv.get(a.key!) ?? NEVER;
      if (r.found !== (k.value !== null)) return undefined;
      if (r.found && r.value !== k.value) return undefined;
      return r.token === k.wm ? s : undefined;
    }
    case 'close': {
      const session = a.session!;
      const after = withoutShared(s.holder === session ? free(s) : s, session);
      if (o.outcome === 'ok') return after;
      return after !== s ? after : undefined; // unknown: only its effect matters
    }
    default:
      return s;
  }
}

/** True when `session` may hold a shared grant under `token` now (an unrevealed one: any token). */
function holdsShared(s: LockState, session: string, token: bigint): boolean {
  const mine = s.shared.get(session);
  return mine === token || (mine === null && s.shared.has(session));
}

function stepExclusiveAcquire(s: LockState, o: Operation): LockState | undefined {
  const session = o.args.session!;
  if (o.outcome === 'ok') {
    const t = o.result!.token!;
    if (s.holder === session && s.token === t) return s; // re-entrant: the same grant
    if (s.holder === session && s.token === null && t >= minUnknownToken(s) && t > s.latest) return reveal(s, t);
    // A new grant (whoever held it before is over: released, closed or expired without an operation).
    if (t > s.latest + BigInt(s.pending)) return make(session, t, t, 0, s.kv);
    return undefined;
  }
  if (o.outcome === 'unknown') {
    // Re-entrant or refused (MODE_CONFLICT while the session reads): changes nothing, same as omitting it.
    if (s.holder === session || (s.shared.has(session) && s.shared.get(session) !== null)) return undefined;
    return make(session, null, s.latest, s.pending + 1, s.kv, endShared(s));
  }
  // fail LOCK_HELD: another session held the lock (exclusively, or shared) when the acquire was decided.
  const others = (s.holder !== null && s.holder !== session) || [...s.shared.keys()].some((x) => x !== session);
  return others ? s : undefined;
}

/**
 * A shared acquire: held together with other shared grants, never with an exclusive one (which ends, lazily).
 * Its token is above every earlier grant's, or equal to the latest when that was shared too (the readers
 * at the head of a queue are granted by one entry).
 */
function stepSharedAcquire(s: LockState, o: Operation): LockState | undefined {
  const session = o.args.session!;
  // The session's own exclusive grant: MODE_CONFLICT, unless it is one of unknown outcome, which the client
  // library may have released on its own (an orphan grant) without an operation in the history.
  if (s.holder === session && s.token !== null) return undefined;
  if (o.outcome === 'unknown') {
    if (s.shared.has(session)) return undefined; // re-entrant: changes nothing
    return make(null, null, s.latest, s.pending, s.kv, { shared: withShared(s, session, null), latestShared: s.latestShared, sharedPending: true });
  }
  if (o.outcome !== 'ok') return s; // not relevant (isRelevant): a refused shared try
  const t = o.result!.token!;
  const mine = s.shared.get(session);
  if (mine === t) return s; // re-entrant: the same grant
  if (mine === null && s.shared.has(session)) {
    // Revealed: any token (its bound was the latest when it was linearized, which is no longer known).
    const latest = t > s.latest ? t : s.latest;
    return make(null, null, latest, t > s.latest ? 0 : s.pending, s.kv, { shared: withShared(s, session, t), latestShared: t >= s.latest || s.latestShared, sharedPending: t > s.latest ? false : s.sharedPending });
  }
  const sameEntry = t === s.latest && s.latestShared && s.pending === 0;
  if (!sameEntry && t <= s.latest + BigInt(s.pending)) return undefined;
  const sharedPending = sameEntry ? s.sharedPending : false;
  return make(null, null, t, 0, s.kv, { shared: withShared(s, session, t), latestShared: true, sharedPending });
}

function stepSharedRelease(s: LockState, o: Operation): LockState | undefined {
  const session = o.args.session!;
  const t = o.args.token!;
  if (o.outcome === 'ok' || o.outcome === 'unknown') return holdsShared(s, session, t) ? withoutShared(s, session) : undefined;
  const reason = o.error?.reason ?? '';
  if (GRANT_OVER_RELEASE.has(reason)) return withoutShared(s, session);
  if (reason === 'WRONG_TOKEN') {
    const mine = s.shared.get(session);
    return mine !== undefined && mine !== null && mine !== t ? s : undefined;
  }
  return s;
}

// ---- obligations: operations that can no longer be linearized -----------------------------------------------

interface TokenOp {
  token: bigint;
  op: number;
}

/**
 * Knows, for the operations of one partition that MUST be linearized (those with a return), when a state makes
 * one of them impossible for good, so the search can abandon a branch at once instead of when it reaches that
 * operation's return. Only monotone facts are used (latest and watermarks never go back):
 *
 * - an acknowledged acquire, write or release under token t needs the grant t to be current: impossible once
 *   latest > t, or once latest = t and that grant has ended (a grant never comes back);
 * - an acknowledged get with watermark w is impossible once the key's watermark is above w.
 */
export class Obligations {
  private readonly byToken: TokenOp[] = [];
  private readonly getsByKey = new Map<string, TokenOp[]>();

  constructor(ops: readonly Operation[]) {
    ops.forEach((o, i) => {
      if (o.outcome !== 'ok') return;
      // A shared grant stays current while later shared grants raise the latest token: not an obligation.
      if (o.op === 'acquire' && !isShared(o)) this.byToken.push({ token: o.result!.token!, op: i });
      else if (o.op === 'write' || (o.op === 'release' && !isShared(o))) this.byToken.push({ token: o.args.token!, op: i });
      else if (o.op === 'get') {
        let list = this.getsByKey.get(o.args.key!);
        if (!list) this.getsByKey.set(o.args.key!, (list = []));
        list.push({ token: o.result!.token!, op: i });
      }
    });
    const cmp = (a: TokenOp, b: TokenOp): number => (a.token < b.token ? -1 : a.token > b.token ? 1 : a.op - b.op);
    this.byToken.sort(cmp);
    for (const list of this.getsByKey.values()) list.sort(cmp);
  }

  /** True when going from `prev` to `next` makes an operation not yet linearized impossible for good. */
  broken(prev: LockState, next: LockState, linearized: (op: number) => boolean): boolean {
    if (next.latest > prev.latest) {
      // Every grant below the new latest is over; at the new latest only the new holder's grant is current.
      for (let i = lowerBound(this.byToken, prev.latest); i < this.byToken.length; i++) {
        const e = this.byToken[i]!;
        if (e.token > next.latest) break;
        if (linearized(e.op)) continue;
        if (e.token < next.latest) return true;
      }
    } else if (prev.holder !== null && prev.token !== null && prev.token === prev.latest && (next.holder !== prev.holder || next.token !== prev.token)) {
      // The current grant ended: nothing under its token can happen any more.
      for (let i = lowerBound(this.byToken, prev.latest); i < this.byToken.length; i++) {
        const e = this.byToken[i]!;
        if (e.token !== prev.latest) break;
        if (!linearized(e.op)) return true;
      }
    }
    if (next.kv !== prev.kv && this.getsByKey.size > 0) {
      for (const [key, k] of next.kv) {
        const before = prev.kv.get(key)?.wm ?? 0n;
        if (k.wm === before) continue;
        const gets = this.getsByKey.get(key);
        if (!gets) continue;
        for (const e of gets) {
          if (e.token >= k.wm) break;
          if (!linearized(e.op)) return true;
        }
      }
    }
    return false;
  }
}

function lowerBound(list: readonly TokenOp[], token: bigint): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.token < token) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
