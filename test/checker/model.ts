// The sequential model of ONE lock and the fenced keys bound to it, for the linearizability checker.
// The rules and why each is sound are in the header of linearizability.ts ("The model").
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
  /** Grants with unknown tokens linearized since `latest`: each is above the previous one. */
  readonly pending: number;
  readonly kv: ReadonlyMap<string, KeyState>;
  /**
   * Canonical text of the state without `pending` (which only says whether it is 0), for memoization: a state
   * that differs only by a smaller non-zero `pending` allows everything the other allows (see dominance in
   * linearizability.ts).
   */
  readonly key: string;
}

const NEVER: KeyState = { value: null, wm: 0n };

function make(holder: string | null, token: bigint | null, latest: bigint, pending: number, kv: ReadonlyMap<string, KeyState>): LockState {
  let key = `${holder ?? ''}|${holder === null ? '' : token === null ? '?' : token.toString()}|${latest}|${pending > 0 ? '+' : '0'}`;
  if (kv.size > 0) {
    const names = kv.size === 1 ? [...kv.keys()] : [...kv.keys()].sort();
    for (const k of names) {
      const s = kv.get(k)!;
      key += `|${k}=${s.value === null ? '\u0000' : JSON.stringify(s.value)}@${s.wm}`;
    }
  }
  return { holder, token, latest, pending, kv, key };
}

export const INITIAL: LockState = make(null, null, 0n, 0, new Map());

const free = (s: LockState): LockState => (s.holder === null ? s : make(null, null, s.latest, s.pending, s.kv));

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
  return s.token === null ? make(s.holder, token, token, 0, s.kv) : s;
}

function watermarksAtMost(s: LockState, writes: readonly KeyWrite[], token: bigint): boolean {
  for (const w of writes) if ((s.kv.get(w.key) ?? NEVER).wm > token) return false;
  return true;
}

function applyWrites(s: LockState, writes: readonly KeyWrite[], token: bigint): LockState {
  const kv = new Map(s.kv);
  for (const w of writes) kv.set(w.key, { value: w.value, wm: token });
  return make(s.holder, s.token, s.latest, s.pending, kv);
}

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
      return o.outcome !== 'fail' || reason === 'LOCK_HELD';
    case 'release':
      return o.outcome !== 'fail' || (reason !== undefined && (GRANT_OVER_RELEASE.has(reason) || reason === 'WRONG_TOKEN'));
    case 'write':
      return o.outcome !== 'fail' || (reason !== undefined && (GRANT_OVER_WRITE.has(reason) || reason === 'STALE_TOKEN'));
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
      return o.outcome === 'fail' && o.error?.reason === 'STALE_TOKEN';
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
    case 'acquire': {
      const session = a.session!;
      if (o.outcome === 'ok') {
        const t = o.result!.token!;
        if (s.holder === session && s.token === t) return s; // re-entrant: the same grant
        if (s.holder === session && s.token === null && t >= minUnknownToken(s) && t > s.latest) return reveal(s, t);
        // A new grant (whoever held it before is over: released, closed or expired without an operation).
        if (t > s.latest + BigInt(s.pending)) return make(session, t, t, 0, s.kv);
        return undefined;
      }
      if (o.outcome === 'unknown') {
        if (s.holder === session) return undefined; // re-entrant or refused: changes nothing, same as omitting it
        return make(session, null, s.latest, s.pending + 1, s.kv);
      }
      // fail LOCK_HELD: another session held the lock when the acquire was decided.
      return s.holder !== null && s.holder !== session ? s : undefined;
    }
    case 'release': {
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
        return s.pending > 0 || t < s.latest || !watermarksAtMost(s, writes, t) ? s : undefined;
      }
      if (GRANT_OVER_WRITE.has(reason)) return holds(s, session, t) ? free(s) : s;
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
      if (o.outcome === 'ok') return s.holder === session ? free(s) : s;
      return s.holder === session ? free(s) : undefined; // unknown: only its effect matters
    }
    default:
      return s;
  }
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
      if (o.op === 'acquire') this.byToken.push({ token: o.result!.token!, op: i });
      else if (o.op === 'write' || o.op === 'release') this.byToken.push({ token: o.args.token!, op: i });
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
