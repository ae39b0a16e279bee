// # The linearizability checker of fencelock histories
//
// `checkLinearizability(ops, { budgetMs })` decides whether a recorded history (history.ts) could have been
// produced by a single, atomic lock service that obeys the fencing rules, given the real-time order of the
// operations. It answers:
//
//   { outcome: 'ok' }          every partition was linearized;
//   { outcome: 'violation' }   some partition cannot be linearized: `ops` is a small sub-history that still
//                              cannot (shrunk greedily), `partition` names the lock;
//   { outcome: 'unknown' }     the time budget ran out first. Never 'ok' in that case.
//
// ## The algorithm (Wing & Gong, Lowe; as in Porcupine)
//
// - Partitioned per lock (P-compositionality, Horn & Kroening): a lock and the keys bound to it are an
//   object of their own, so each lock's operations are checked separately. Gets go to the lock of their key;
//   a close goes to every lock its session touched; open and keepalive change no lock and are left out.
//   Small partitions are checked first; `partitionBudgetMs` keeps one hard lock from starving the others.
// - Each partition becomes a doubly linked list of call and return entries sorted by time (a call before a
//   return at equal times, so touching operations count as concurrent). The operations that may be
//   linearized next are the calls before the first return entry still in the list. Linearizing one "lifts"
//   its call and return out of the list (just in time); backtracking puts them back.
// - Depth-first search with memoization of (set of linearized operations, model state): the set is a
//   bitset, the memo key a Zobrist hash of it plus the state's canonical text.
// - Unknown outcomes (timeouts): the operation may have happened at any time after its call, or never. Its
//   call entry has no return entry, so nothing ever forces it, and the search succeeds as soon as every
//   operation WITH a return is linearized (Porcupine gets the same effect from infinite return times).
//
// Four refinements keep it fast on lock histories. The first three and the dominance change no answer (they
// prune only branches that cannot succeed, or that a branch already searched covers); "reusable" unknown
// acquires over-approximate, which can only turn a violation into 'ok', never the reverse:
//
// 1. Candidate order: the candidate that returned first is tried first (unknown ones last), not call order.
//    A blocked acquire (called early, returning late) is otherwise tried before the holder's write and
//    release.
// 2. Idle steps are forced: a candidate that is possible now and leaves the state unchanged, and always
//    will (a read, a STALE_TOKEN refusal, a try-lock that found the lock held, a re-entrant acquire), is
//    linearized now with no other branch: moving it earlier in any valid completion changes no state, and
//    it is minimal (called before every pending return).
// 3. Obligations (model.ts `Obligations`): a step that makes an operation with a return impossible for good
//    (a grant below the new latest token, a read below a key's new watermark) ends the branch at once,
//    instead of when the search reaches that operation's return.
// 4. Dominance in the memo: operations of unknown outcome are kept out of the hashed set; a node is skipped
//    when a node with the same known set and state, fewer unknown operations used up and a pending count no
//    larger (see the model) was searched: it had every option this one has. And an acquire of unknown
//    outcome is "reusable": it may grant its session the lock at any time after its call, also more than
//    once. That over-approximation only admits more histories (never a false violation); without it every
//    subset of the pending unknown acquires is a different node, and a few dozen of them made the search
//    explode.
//
// ## The model (model.ts): one lock and its fenced keys
//
// State: holder session | null, the holder's token, the latest token issued, and per key {value, watermark}.
//
// - acquire ok (token t): the same grant again when the session already holds it under t (re-entrant);
//   otherwise a new grant, which needs t > latest. Tokens are Raft log indexes: strictly increasing per lock
//   but not consecutive, so any larger token is accepted.
// - release ok (t): the session holds the lock under t; then the lock is free.
// - write ok (t): the session holds the lock under exactly t and no touched key has a watermark above t;
//   each key takes the value (or a tombstone) and watermark t.
// - write refused STALE_TOKEN: t < latest, or a touched key's watermark is above t.
//   write refused LOCK_NOT_HELD / UNKNOWN_SESSION / NOT_HOLDER, release refused NOT_HOLDER / UNKNOWN_SESSION:
//   the session does not hold the lock under t: that grant is over or was never its (the lock becomes free
//   in the model if it still named that grant). release refused WRONG_TOKEN: the session holds the lock
//   under another token.
// - acquire failed LOCK_HELD (try-lock found it held; a blocking wait ran out): another session held it.
// - get ok: found/value/watermark equal the model's key. A close frees the lock if the session held it.
// - Other refusals (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, WRONG_LOCK, ...) constrain nothing.
//
// Expiry (and anything else that ends a grant without an operation of the history: a session closed by the
// client library's cleanup, an orphan grant released after a timed-out acquire) is not visible in the
// history. The model treats the end of a grant as possible at any time, and applies it lazily: the lock is
// considered free exactly when an operation needs it free (a grant to another session, a refusal that says
// the grant is over). Lazy ending is as permissive as ending at any moment (an operation that needs the
// holder never follows one that ended the grant, in any valid history), so the check stays sound; it is
// weaker than a model with leases, since it cannot tell an early expiry from a legal one. It still catches
// what fencing must prevent: a grant with a token that does not increase, a write accepted under a token
// after a newer grant (or from the wrong session), a read of a value never written or overwritten, a lost
// acknowledged write, a write refused as stale while no newer grant existed, a try-lock refused while free.
//
// An acquire with an unknown outcome may have granted the lock under a token the client never learnt: the
// model keeps it as "held with an unrevealed token", a lower bound for later tokens (`pending`: each such
// grant is above the previous one), revealed by a later re-entrant acquire; meanwhile any STALE_TOKEN
// refusal is accepted.
//
// ## Read-write locks, semaphores, AcquireAll (issue 33)
//
// Semaphore slots and AcquireAll are projected onto single resources first (projection.ts says how and why
// that is sound); the cross-resource facts are invariants (invariants.ts). Shared grants are in the model:
//
// - acquire shared ok (t): a new grant ends the exclusive one (lazily, as above) and needs t > latest, or
//   t = latest when the grant at latest was shared (readers granted by one entry share its index); the same
//   session's live shared grant under t again is re-entrant. Shared grants hold together.
// - acquire exclusive ok (t > latest): ends every shared grant. So an exclusive token is above every earlier
//   shared one, and a reader's release, or a writer's write, after the other mode was granted is impossible.
// - write ok needs the exclusive grant; write refused SHARED_GRANT needs the session's live shared grant
//   under t; release (mode shared) needs it too.
// - acquire shared of unknown outcome: a shared grant with an unrevealed token. It does not raise the bound
//   for later tokens (one Expire entry may end every reader and grant a writer at latest + 1), so it only
//   admits STALE_TOKEN refusals until a known grant sets a new latest. A re-entrant acquire reveals it
//   under any token (its bound is not kept: more permissive, never less).
// - a shared try refused (LOCK_HELD) constrains nothing: readers also queue behind a waiting writer.
// - Obligations leave shared grants out: a reader stays current while later readers raise the latest token.
//
// ## Soundness notes for recorders
//
// 'fail' must mean "did not take effect". REQUEST_TOO_OLD (the request's result was forgotten) and anything
// indeterminate are 'unknown' (test/chaos/recorder.ts classifies them). A write's reported log index is not
// used for ordering: a retried write is answered from the dedup table by a later entry.
//
// ## Cost
//
// Exponential in the worst case (linearizability checking is NP-complete), in practice close to linear:
// simulated histories of 11,000 operations (32 clients, 4 hot locks of ~1,300 operations each, 5% unknown
// outcomes, expiries) check in about 0.3 s, about one search node per operation. What still costs the most
// is many concurrent writes of unknown outcome under one grant followed by a contradiction (every subset
// and order is tried): the budget bounds it, and the answer is then 'unknown'.
import { performance } from 'node:perf_hooks';
import { formatOps, validateHistory, type Operation } from './history';
import { INITIAL, Obligations, idleIsStable, isRelevant, step, type LockState } from './model';
import { projectHistory } from './projection';

export interface CheckOptions {
  /** Time for the search over all partitions (ms); past it the answer is unknown. Default 10,000. */
  budgetMs?: number;
  /** Time for shrinking a violation, on top of budgetMs (ms). Default max(1,000, 30% of budgetMs). */
  shrinkBudgetMs?: number;
  /** Time for one partition (ms), so one hard lock does not starve the others. Default: budgetMs. */
  partitionBudgetMs?: number;
  /** Skip shrinking (the violation is then the whole failing partition). */
  noShrink?: boolean;
}

export interface PartitionStats {
  partition: string;
  ops: number;
  ms: number;
  /** Search nodes expanded (model steps that succeeded and were new). */
  nodes: number;
  verdict: 'ok' | 'violation' | 'unknown';
}

export interface CheckStats {
  partitions: number;
  opsChecked: number;
  /** Operations left out of the search (no lock, or nothing to check: open, keepalive, failed reads...). */
  opsSkipped: number;
  ms: number;
  /** The slowest partitions (up to 5). */
  slowest: PartitionStats[];
}

export type LinearizabilityResult =
  | { outcome: 'ok'; stats: CheckStats }
  | {
      outcome: 'violation';
      /** The lock (or `key:<key>` for reads of keys of no known lock). */
      partition: string;
      /** A sub-history of the partition that cannot be linearized, shrunk while time allowed. */
      ops: Operation[];
      /** How many operations the failing partition had before shrinking. */
      partitionSize: number;
      /** The deepest linearization of the shrunk ops the search reached before every branch failed. */
      longestLinearizable: Operation[];
      /** Human-readable: the ops, one line each. */
      explanation: string;
      stats: CheckStats;
    }
  | { outcome: 'unknown'; reason: string; unfinished: string[]; stats: CheckStats };

// ---- partitioning -----------------------------------------------------------------------------------------

/** Splits a history into one sub-history per lock (operations the model does not use are dropped). */
export function partitionByLock(ops: readonly Operation[]): { partitions: Map<string, Operation[]>; skipped: number } {
  const keyLock = new Map<string, string>();
  const sessionLocks = new Map<string, Set<string>>();
  for (const o of ops) {
    const lock = o.args.lock;
    if (lock === undefined) continue;
    if (o.op === 'write') for (const w of o.args.writes ?? []) if (!keyLock.has(w.key)) keyLock.set(w.key, lock);
    if (o.args.session !== undefined && (o.op === 'acquire' || o.op === 'release' || o.op === 'write')) {
      let set = sessionLocks.get(o.args.session);
      if (!set) sessionLocks.set(o.args.session, (set = new Set()));
      set.add(lock);
    }
  }
  const partitions = new Map<string, Operation[]>();
  const add = (p: string, o: Operation): void => {
    let list = partitions.get(p);
    if (!list) partitions.set(p, (list = []));
    list.push(o);
  };
  let skipped = 0;
  for (const o of ops) {
    if (!isRelevant(o)) {
      skipped++;
      continue;
    }
    if (o.op === 'get') {
      const key = o.args.key!;
      const lock = o.args.lock ?? keyLock.get(key) ?? (o.result?.lock ? o.result.lock : undefined);
      add(lock ?? `key:${key}`, o);
    } else if (o.op === 'close') {
      const locks = o.args.session === undefined ? undefined : sessionLocks.get(o.args.session);
      if (!locks) skipped++;
      else for (const l of locks) add(l, o);
    } else {
      add(o.args.lock!, o);
    }
  }
  return { partitions, skipped };
}

// ---- the search -------------------------------------------------------------------------------------------

interface Entry {
  /** Index into the partition's ops; -1 for the list head. */
  op: number;
  call: boolean;
  time: number;
  prev: Entry | null;
  next: Entry | null;
  /** A call's return entry; null for an unknown outcome (never returns) and for return entries. */
  match: Entry | null;
}

type SearchResult = { verdict: 'ok'; nodes: number } | { verdict: 'violation'; nodes: number; longest: number[] } | { verdict: 'unknown'; nodes: number };

/** Deterministic 32-bit values for Zobrist hashing of the linearized set. */
function zobrist(n: number, seed: number): Int32Array {
  const out = new Int32Array(n);
  let s = seed | 0;
  for (let i = 0; i < n; i++) {
    s = (s + 0x6d2b79f5) | 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    out[i] = z ^ (z >>> 14);
  }
  return out;
}

interface MemoEntry {
  known: Uint32Array;
  unknown: Uint32Array;
  pending: number;
}

/**
 * Wing-Gong-Lowe search over one partition. `deadline` is a performance.now() value; `trackLongest` keeps the
 * deepest linearized prefix (for reports; costs a copy whenever the search goes deeper than before).
 */
function search(ops: readonly Operation[], deadline: number, trackLongest: boolean): SearchResult {
  const n = ops.length;
  const head: Entry = { op: -1, call: false, time: Number.NEGATIVE_INFINITY, prev: null, next: null, match: null };
  const entries: Entry[] = [];
  // Operations with a return ("known") and without ("unknown") are numbered apart for the memo's bitsets.
  // Acquires with an unknown outcome are "reusable": never lifted, never in a bitset (see the file comment).
  const slot = new Int32Array(n);
  const reusable = new Uint8Array(n);
  let knownCount = 0;
  let unknownCount = 0;
  for (let i = 0; i < n; i++) {
    const o = ops[i]!;
    const c: Entry = { op: i, call: true, time: o.call, prev: null, next: null, match: null };
    entries.push(c);
    if (o.outcome !== 'unknown') {
      const r: Entry = { op: i, call: false, time: o.ret!, prev: null, next: null, match: null };
      c.match = r;
      entries.push(r);
      slot[i] = knownCount++;
    } else if (o.op === 'acquire') {
      reusable[i] = 1;
      slot[i] = -1;
    } else {
      slot[i] = unknownCount++;
    }
  }
  let remaining = knownCount; // operations with a return that are not linearized yet
  entries.sort((x, y) => x.time - y.time || (x.call === y.call ? x.op - y.op : x.call ? -1 : 1));
  let prev = head;
  for (const e of entries) {
    prev.next = e;
    e.prev = prev;
    prev = e;
  }

  const lift = (e: Entry): void => {
    e.prev!.next = e.next;
    if (e.next) e.next.prev = e.prev;
    const m = e.match;
    if (m) {
      m.prev!.next = m.next;
      if (m.next) m.next.prev = m.prev;
    }
  };
  const unlift = (e: Entry): void => {
    const m = e.match;
    if (m) {
      m.prev!.next = m;
      if (m.next) m.next.prev = m;
    }
    e.prev!.next = e;
    if (e.next) e.next.prev = e;
  };
  /** The calls before the first return still in the list, the one returning first first, unknown ones last. */
  const candidates = (): Entry[] => {
    const out: Entry[] = [];
    for (let e = head.next; e !== null && e.call; e = e.next) out.push(e);
    if (out.length > 1) {
      out.sort((x, y) => {
        const rx = x.match ? x.match.time : Number.POSITIVE_INFINITY;
        const ry = y.match ? y.match.time : Number.POSITIVE_INFINITY;
        return rx - ry || x.time - y.time || x.op - y.op;
      });
    }
    return out;
  };

  const known = new Uint32Array((knownCount + 31) >>> 5);
  const unknown = new Uint32Array((unknownCount + 31) >>> 5);
  const linearized = (i: number): boolean => {
    const k = slot[i]!;
    if (k < 0) return false;
    const bits = ops[i]!.outcome === 'unknown' ? unknown : known;
    return (bits[k >>> 5]! & (1 << (k & 31))) !== 0;
  };
  const z1 = zobrist(knownCount, 0x1234567);
  const z2 = zobrist(knownCount, 0x7654321);
  let h1 = 0;
  let h2 = 0;
  const toggle = (i: number): void => {
    const k = slot[i]!;
    if (k < 0) return;
    if (ops[i]!.outcome === 'unknown') {
      unknown[k >>> 5]! ^= 1 << (k & 31);
    } else {
      known[k >>> 5]! ^= 1 << (k & 31);
      h1 ^= z1[k]!;
      h2 ^= z2[k]!;
    }
  };
  // The memo, with dominance: (K, U, s) needs no search when (K, U', s') was searched (and failed) with the
  // same known operations K linearized, U' ⊆ U (fewer optional operations used up: more left to use) and s'
  // equal to s except a pending count no larger (a smaller lower bound on unrevealed tokens allows more).
  const memo = new Map<string, MemoEntry[]>();
  const remember = (state: LockState): boolean => {
    const key = `${h1}:${h2}:${state.key}`;
    const seen = memo.get(key);
    if (seen) {
      outer: for (const e of seen) {
        if (e.pending > state.pending) continue;
        for (let w = 0; w < known.length; w++) if (e.known[w] !== known[w]) continue outer;
        for (let w = 0; w < unknown.length; w++) if ((e.unknown[w]! & ~unknown[w]!) !== 0) continue outer;
        return false;
      }
      seen.push({ known: known.slice(), unknown: unknown.slice(), pending: state.pending });
    } else {
      memo.set(key, [{ known: known.slice(), unknown: unknown.slice(), pending: state.pending }]);
    }
    return true;
  };
  const obligations = new Obligations(ops);

  interface Frame {
    state: LockState;
    /** The candidates and the state after each (undefined: impossible now); null until first visited. */
    cands: Entry[] | null;
    afters: Array<LockState | undefined>;
    next: number;
    via: Entry | null;
  }
  const frames: Frame[] = [{ state: INITIAL, cands: null, afters: [], next: 0, via: null }];
  let nodes = 0;
  let longest: number[] = [];
  let iterations = 0;
  for (;;) {
    if (remaining === 0) return { verdict: 'ok', nodes };
    if ((++iterations & 255) === 0 && performance.now() > deadline) return { verdict: 'unknown', nodes };
    const f = frames[frames.length - 1]!;
    if (f.cands === null) {
      const cands = candidates();
      // Right after a grant of unknown outcome, another one is pointless: the second alone leaves a state
      // that allows at least as much (a smaller pending count).
      // Not so with shared grants: an exclusive one after a shared one keeps its STALE_TOKEN allowance, and two
      // shared ones are two holders.
      const afterReusable = f.via !== null && reusable[f.via.op] === 1 && ops[f.via.op]!.args.mode !== 'shared';
      const afters = cands.map((c) => {
        if (afterReusable && reusable[c.op] === 1 && ops[c.op]!.args.mode !== 'shared') return undefined;
        const after = step(f.state, ops[c.op]!);
        if (after === undefined || after === f.state) return after;
        // A branch that makes an operation with a return impossible for good cannot succeed.
        return obligations.broken(f.state, after, (i) => i === c.op || linearized(i)) ? undefined : after;
      });
      // An operation that changes nothing (a read, a refusal, a re-entrant acquire) and is possible now can be
      // linearized now without loss: moving it earlier in any valid completion keeps every state the same, and
      // it is minimal (called before every pending return). So it is the only branch worth trying here.
      const idle = afters.findIndex((a, i) => a === f.state && idleIsStable(ops[cands[i]!.op]!));
      if (idle >= 0) {
        f.cands = [cands[idle]!];
        f.afters = [f.state];
      } else {
        f.cands = cands;
        f.afters = afters;
      }
    }
    let advanced = false;
    while (f.next < f.cands.length) {
      const i = f.next++;
      const c = f.cands[i]!;
      const after = f.afters[i];
      if (after === undefined) continue;
      toggle(c.op);
      if (!remember(after)) {
        toggle(c.op);
        continue;
      }
      if (reusable[c.op] === 0) lift(c);
      if (c.match) remaining--;
      nodes++;
      frames.push({ state: after, cands: null, afters: [], next: 0, via: c });
      advanced = true;
      break;
    }
    if (advanced) {
      if (trackLongest && frames.length - 1 > longest.length) longest = frames.slice(1).map((fr) => fr.via!.op);
      continue;
    }
    frames.pop();
    if (frames.length === 0) return { verdict: 'violation', nodes, longest };
    const via = f.via!;
    if (reusable[via.op] === 0) {
      unlift(via);
      toggle(via.op);
    }
    if (via.match) remaining++;
  }
}

// ---- shrinking --------------------------------------------------------------------------------------------

/**
 * For each operation, the operations of the same partition it needs to make sense: a write or release needs
 * the acquire that gave its session the token (or one of its unknown acquires); a read of a value needs a
 * write that wrote it. Shrinking keeps at least one of them, so that a report never blames a write for lacking
 * the grant the shrinking removed, or a read for a write it removed.
 */
function supportsOf(ops: readonly Operation[]): Map<number, number[]> {
  const acquiresBySession = new Map<string, Operation[]>();
  const writesByKeyToken = new Map<string, Operation[]>();
  const push = <K>(m: Map<K, Operation[]>, k: K, o: Operation): void => {
    const list = m.get(k);
    if (list) list.push(o);
    else m.set(k, [o]);
  };
  for (const o of ops) {
    if (o.op === 'acquire' && o.outcome !== 'fail') push(acquiresBySession, `${o.args.lock}\u0000${o.args.session}`, o);
    if (o.op === 'write' && o.outcome !== 'fail') for (const w of o.args.writes ?? []) push(writesByKeyToken, `${w.key}\u0000${o.args.token}`, o);
  }
  const support = new Map<number, number[]>();
  for (const o of ops) {
    let need: number[] = [];
    if (o.op === 'write' || o.op === 'release') {
      need = (acquiresBySession.get(`${o.args.lock}\u0000${o.args.session}`) ?? [])
        .filter((a) => (o.ret === undefined || a.call < o.ret) && (a.outcome === 'unknown' || a.result!.token === o.args.token))
        .map((a) => a.id);
    } else if (o.op === 'get' && o.outcome === 'ok' && (o.result!.found || o.result!.token! > 0n)) {
      const want = o.result!.found ? (o.result!.value ?? null) : null;
      need = (writesByKeyToken.get(`${o.args.key}\u0000${o.result!.token}`) ?? [])
        .filter((w) => w.call < o.ret! && (w.args.writes ?? []).some((x) => x.key === o.args.key && x.value === want))
        .map((w) => w.id);
    }
    if (need.length > 0) support.set(o.id, need);
  }
  return support;
}

/**
 * Shrinks a failing partition: first the shortest failing prefix (by call time), then greedy removal of
 * chunks and single operations while the rest still fails. Every kept candidate was confirmed failing; a
 * sub-check that runs out of time counts as "does not fail".
 */
function shrink(ops: Operation[], deadline: number): Operation[] {
  const support = supportsOf(ops);
  const closed = (sub: Operation[]): boolean => {
    const ids = new Set(sub.map((o) => o.id));
    return sub.every((o) => {
      const need = support.get(o.id);
      return need === undefined || need.some((id) => ids.has(id));
    });
  };
  const fails = (sub: Operation[]): boolean => sub.length > 0 && closed(sub) && search(sub, deadline, false).verdict === 'violation';
  const timeLeft = (): boolean => performance.now() < deadline;
  let cur = [...ops].sort((x, y) => x.call - y.call || x.id - y.id);
  // Shortest failing prefix (binary search; failing is usually monotone in the prefix length).
  let lo = 1;
  let hi = cur.length;
  while (lo < hi && timeLeft()) {
    const mid = (lo + hi) >>> 1;
    if (fails(cur.slice(0, mid))) hi = mid;
    else lo = mid + 1;
  }
  if (hi < cur.length && fails(cur.slice(0, hi))) cur = cur.slice(0, hi);
  // Greedy removal of chunks of halving size, from the end; then single operations until nothing goes.
  for (let size = Math.max(1, cur.length >>> 1); size > 1 && timeLeft(); size >>>= 1) {
    for (let end = cur.length; end > 0 && timeLeft(); end -= size) {
      const start = Math.max(0, end - size);
      const candidate = cur.slice(0, start).concat(cur.slice(end));
      if (fails(candidate)) cur = candidate;
    }
  }
  for (let changed = true; changed && timeLeft(); ) {
    changed = false;
    for (let i = cur.length - 1; i >= 0 && timeLeft(); i--) {
      const candidate = cur.slice(0, i).concat(cur.slice(i + 1));
      if (fails(candidate)) {
        cur = candidate;
        changed = true;
      }
    }
  }
  return cur;
}

// ---- the check --------------------------------------------------------------------------------------------

/** Checks one history (operations of all locks). See the file comment. */
export function checkLinearizability(history: readonly Operation[], opts: CheckOptions = {}): LinearizabilityResult {
  const t0 = performance.now();
  const budget = opts.budgetMs ?? 10_000;
  const deadline = t0 + budget;
  const problems = validateHistory(history);
  if (problems.length > 0) throw new Error(`malformed history: ${problems.slice(0, 5).join('; ')}`);

  const { partitions, skipped } = partitionByLock(projectHistory(history));
  // Small partitions first: the many cheap ones are not starved by one expensive one.
  const order = [...partitions.entries()].sort((a, b) => a[1].length - b[1].length || (a[0] < b[0] ? -1 : 1));
  const perPartition: PartitionStats[] = [];
  const unfinished: string[] = [];
  let checked = 0;
  const stats = (): CheckStats => ({
    partitions: partitions.size,
    opsChecked: checked,
    opsSkipped: skipped,
    ms: performance.now() - t0,
    slowest: [...perPartition].sort((a, b) => b.ms - a.ms).slice(0, 5),
  });

  for (const [name, ops] of order) {
    if (performance.now() > deadline) {
      unfinished.push(name);
      continue;
    }
    const p0 = performance.now();
    const r = search(ops, Math.min(deadline, p0 + (opts.partitionBudgetMs ?? budget)), false);
    perPartition.push({ partition: name, ops: ops.length, ms: performance.now() - p0, nodes: r.nodes, verdict: r.verdict });
    checked += ops.length;
    if (r.verdict === 'unknown') {
      unfinished.push(name);
      continue;
    }
    if (r.verdict === 'violation') {
      const shrinkMs = opts.shrinkBudgetMs ?? Math.max(1_000, budget * 0.3);
      const small = opts.noShrink ? [...ops].sort((x, y) => x.call - y.call || x.id - y.id) : shrink(ops, performance.now() + shrinkMs);
      const again = search(small, performance.now() + Math.max(1_000, shrinkMs), true);
      const longest = again.verdict === 'violation' ? again.longest.map((i) => small[i]!) : [];
      return {
        outcome: 'violation',
        partition: name,
        ops: small,
        partitionSize: ops.length,
        longestLinearizable: longest,
        explanation:
          `lock ${JSON.stringify(name)}: these ${small.length} operations (of ${ops.length}) cannot be linearized:\n${formatOps(small)}` +
          (longest.length > 0 ? `\nlongest linearizable sequence: ${longest.map((o) => `#${o.id}`).join(' ')}` : ''),
        stats: stats(),
      };
    }
  }
  if (unfinished.length > 0) {
    return { outcome: 'unknown', reason: `time budget of ${budget} ms exceeded`, unfinished, stats: stats() };
  }
  return { outcome: 'ok', stats: stats() };
}
