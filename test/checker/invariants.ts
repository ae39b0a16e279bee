// Direct checks on a history (history.ts): cheap, O(n log n), and each names the operations that break it.
// They complement the linearizability checker: they need no search, so they also run on histories too big or
// too uncertain for it, and their messages say plainly what went wrong.
//
//   token-order     per lock, an acknowledged grant that returned before another grant was called has the
//                   smaller token (re-entrant acquires of the same grant may repeat it).
//   token-unique    per lock, one token belongs to one grant: never to two sessions. (Across locks one token
//                   may repeat: an Expire/Close entry hands every lock of the session to its next waiter,
//                   each with the entry's index.)
//   stale-write     per lock, no write is accepted under a token below a grant that returned before the write
//                   was called (the store knew the newer grant: docs/architecture.md#promises, promise 2).
//   write-token     accepted writes under one (lock, token) all come from one session, the one that was
//                   granted the token when the history shows the grant.
//   write-order     no accepted write has a token below an accepted write to the same key that returned
//                   before it was called (watermarks never go back).
//   write-index     an accepted write's log index is above its token (the grant's entry came first).
//   stale-read      a read returns a watermark at least the token of every accepted write to the key that
//                   returned before the read was called.
//   phantom-read    a read returns what some write (accepted or of unknown outcome, called before the read
//                   returned) wrote, under that write's token; never what a refused write carried.
//   lost-write      (with final reads) every acknowledged write is in the final state unless a later write
//                   overwrote it: the final watermark is at least every accepted token of the key, and the
//                   final value comes from a write with the final watermark that no acknowledged write with
//                   the same token followed.
//   minority-answer (with minority windows) no operation that ran entirely inside a window where the
//                   endpoint that answered it was on the minority side completed ok.
//
// Issue 33's primitives. The checks above run on the projected history (projection.ts): a semaphore slot is
// a resource like a lock (so token-order, token-unique, stale-write, write-* and the key checks hold per
// slot), an AcquireAll is a grant of each of its locks. Shared grants take no part in token-unique and
// write-token (readers granted by one entry share its index; they never write). Then, on the history as
// recorded:
//   shared-write    no write is accepted under a token its session was granted in shared mode.
//   permit-slot     a granted permit's slot is in 0..permits-1 (at most `permits` holders at once, given
//                   one holder per slot, which the per-slot checks and the linearizability model judge).
//   set-token       an AcquireAll answered one token for all its locks (one entry granted the whole set).
//   grant-order     across every lock and slot: a grant that returned before a NEW grant was called has the
//                   smaller token. Tokens are indexes of one log, applied in order; a new grant's entry is
//                   applied after its call, any grant's before its return. This is what projecting an
//                   AcquireAll per lock loses: the set's single entry against the other locks' grants (a set
//                   granted lock by lock, a partial set, would show an entry too early or too late). A grant is
//                   new unless its session asked the same lock or semaphore before (a re-entrant answer
//                   repeats an older token).
import { resourceOf, type FinalRead, type MinorityWindow, type Operation } from './history';
import { projectHistory } from './projection';

export type InvariantName =
  | 'token-order'
  | 'token-unique'
  | 'stale-write'
  | 'write-token'
  | 'write-order'
  | 'write-index'
  | 'stale-read'
  | 'phantom-read'
  | 'lost-write'
  | 'minority-answer'
  | 'shared-write'
  | 'permit-slot'
  | 'set-token'
  | 'grant-order';

export interface InvariantViolation {
  invariant: InvariantName;
  message: string;
  ops: Operation[];
}

export interface InvariantOptions {
  /** The final read of keys after the run, every fault healed. Keys absent from the map are not checked. */
  finalState?: ReadonlyMap<string, FinalRead>;
  /** Windows where endpoints were on a minority side; skipped when not given. */
  minorityWindows?: readonly MinorityWindow[];
  /** At most this many violations per invariant (default 20). */
  maxPerInvariant?: number;
}

const isOk = (o: Operation): boolean => o.outcome === 'ok';

function groupBy<K>(ops: readonly Operation[], key: (o: Operation) => K | undefined): Map<K, Operation[]> {
  const m = new Map<K, Operation[]>();
  for (const o of ops) {
    const k = key(o);
    if (k === undefined) continue;
    let list = m.get(k);
    if (!list) m.set(k, (list = []));
    list.push(o);
  }
  return m;
}

/**
 * For each op of `later` (any order), the op of `earlier` with the highest `value` among those that returned
 * strictly before it was called. One sort each, one sweep.
 */
function maxBefore(
  earlier: readonly Operation[],
  later: readonly Operation[],
  value: (o: Operation) => bigint,
  visit: (o: Operation, best: Operation | undefined) => void,
): void {
  const byRet = earlier.filter((o) => o.ret !== undefined && o.outcome !== 'unknown').sort((a, b) => a.ret! - b.ret!);
  const byCall = [...later].sort((a, b) => a.call - b.call);
  let i = 0;
  let best: Operation | undefined;
  for (const o of byCall) {
    while (i < byRet.length && byRet[i]!.ret! < o.call) {
      const e = byRet[i++]!;
      if (best === undefined || value(e) > value(best)) best = e;
    }
    visit(o, best);
  }
}

/** What `o` left in `key` (the last of its writes to it): a value, or null for a delete. */
const writtenValue = (o: Operation, key: string): string | null | undefined => {
  let v: string | null | undefined;
  for (const w of o.args.writes ?? []) if (w.key === key) v = w.value;
  return v;
};

export function checkInvariants(recorded: readonly Operation[], opts: InvariantOptions = {}): InvariantViolation[] {
  const ops = projectHistory(recorded);
  const limit = opts.maxPerInvariant ?? 20;
  const out: InvariantViolation[] = [];
  const counts = new Map<InvariantName, number>();
  const report = (invariant: InvariantName, message: string, involved: Operation[]): void => {
    const c = counts.get(invariant) ?? 0;
    counts.set(invariant, c + 1);
    if (c < limit) out.push({ invariant, message, ops: involved });
  };

  const grants = ops.filter((o) => o.op === 'acquire' && isOk(o) && o.result?.token !== undefined);
  const repeats = repeatedGrants(recorded);
  const writes = ops.filter((o) => o.op === 'write' && o.args.token !== undefined && o.args.lock !== undefined);
  const accepted = writes.filter(isOk);

  // token-order and token-unique, per lock.
  const grantOf = new Map<string, Operation>(); // `${lock}\0${token}` -> first grant seen
  for (const [lock, list] of groupBy(grants, (o) => o.args.lock)) {
    maxBefore(list, list, (o) => o.result!.token!, (b, a) => {
      // A re-entrant shared answer may repeat a token below a reader that came in meanwhile.
      if (a === undefined || (b.args.mode === 'shared' && repeats.has(b.id))) return;
      const ta = a.result!.token!;
      const tb = b.result!.token!;
      if (ta > tb) report('token-order', `lock ${lock}: grant token ${tb} (op ${b.id}) was called after grant token ${ta} (op ${a.id}) returned`, [a, b]);
    });
    for (const o of [...list].sort((x, y) => x.call - y.call)) {
      if (o.args.mode === 'shared') continue;
      const k = `${lock}\u0000${o.result!.token!}`;
      const first = grantOf.get(k);
      if (first === undefined) grantOf.set(k, o);
      else if (first.args.session !== o.args.session) {
        report('token-unique', `lock ${lock}: token ${o.result!.token} granted to two sessions (ops ${first.id} and ${o.id})`, [first, o]);
      }
    }
  }

  // stale-write, per lock.
  const grantsByLock = groupBy(grants, (o) => o.args.lock);
  for (const [lock, list] of groupBy(accepted, (o) => o.args.lock)) {
    maxBefore(grantsByLock.get(lock) ?? [], list, (o) => o.result!.token!, (w, g) => {
      if (g !== undefined && g.result!.token! > w.args.token!) {
        report('stale-write', `lock ${lock}: write op ${w.id} accepted under token ${w.args.token} after grant op ${g.id} (token ${g.result!.token}) had returned`, [g, w]);
      }
    });
  }

  // write-token and write-index.
  for (const [k, list] of groupBy(accepted, (o) => `${o.args.lock}\u0000${o.args.token}`)) {
    const grant = grantOf.get(k);
    const sessions = new Set(list.map((o) => o.args.session));
    if (sessions.size > 1) {
      const [lock, token] = k.split('\u0000');
      const one = list.find((o) => o.args.session !== list[0]!.args.session)!;
      report('write-token', `lock ${lock}: writes of two sessions accepted under token ${token} (ops ${list[0]!.id} and ${one.id})`, [list[0]!, one]);
    }
    if (grant !== undefined) {
      const wrong = list.find((o) => o.args.session !== grant.args.session);
      if (wrong) {
        report('write-token', `lock ${grant.args.lock}: write op ${wrong.id} accepted under token ${wrong.args.token} that was granted to another session (op ${grant.id})`, [grant, wrong]);
      }
    }
  }
  for (const o of accepted) {
    const index = o.result?.index;
    if (index !== undefined && index <= o.args.token!) report('write-index', `write op ${o.id} applied at index ${index}, not after its grant (token ${o.args.token})`, [o]);
  }

  // Per key: write-order, stale-read, phantom-read, lost-write.
  const keys = new Set<string>();
  for (const o of writes) for (const w of o.args.writes ?? []) keys.add(w.key);
  const gets = ops.filter((o) => o.op === 'get' && isOk(o) && o.args.key !== undefined);
  for (const o of gets) keys.add(o.args.key!);
  const getsByKey = groupBy(gets, (o) => o.args.key);
  const writesByKey = new Map<string, Operation[]>();
  for (const o of writes) {
    for (const w of new Set((o.args.writes ?? []).map((x) => x.key))) {
      let list = writesByKey.get(w);
      if (!list) writesByKey.set(w, (list = []));
      list.push(o);
    }
  }
  for (const key of keys) {
    const kw = writesByKey.get(key) ?? [];
    const kAcc = kw.filter(isOk);
    const token = (o: Operation): bigint => o.args.token!;
    maxBefore(kAcc, kAcc, token, (b, a) => {
      if (a !== undefined && token(a) > token(b)) {
        report('write-order', `key ${key}: write op ${b.id} accepted under token ${token(b)} after write op ${a.id} under token ${token(a)} had returned`, [a, b]);
      }
    });
    const kGets = getsByKey.get(key) ?? [];
    maxBefore(kAcc, kGets, token, (g, a) => {
      const w = g.result!.token!;
      if (a !== undefined && token(a) > w) {
        report('stale-read', `key ${key}: read op ${g.id} saw watermark ${w} after write op ${a.id} (token ${token(a)}) had returned`, [a, g]);
      }
    });
    const mayHaveWritten = kw.filter((o) => o.outcome !== 'fail');
    for (const g of kGets) {
      const r = g.result!;
      const w = r.token!;
      if (!r.found && w === 0n) continue; // never written: stale-read covers acknowledged writes before it
      const want = r.found ? (r.value ?? null) : null;
      const source = mayHaveWritten.find(
        (o) => token(o) === w && writtenValue(o, key) === want && (g.ret === undefined || o.call < g.ret),
      );
      if (!source) {
        const what = r.found ? `value ${JSON.stringify(r.value)}` : 'a deletion';
        const refused = kw.find((o) => o.outcome === 'fail' && writtenValue(o, key) === want);
        report('phantom-read', `key ${key}: read op ${g.id} returned ${what} at watermark ${w}, which no write that may have been applied wrote${refused ? ` (refused write op ${refused.id} carried it)` : ''}`, refused ? [refused, g] : [g]);
      }
    }
    const final = opts.finalState?.get(key);
    if (final !== undefined) checkFinal(key, final, kw, report);
  }

  checkIssue33(recorded, grants.filter((o) => o.args.mode === 'shared'), accepted, repeats, report);

  // minority-answer.
  if (opts.minorityWindows && opts.minorityWindows.length > 0) {
    for (const o of ops) {
      if (!isOk(o) || o.endpoint === undefined || o.ret === undefined) continue;
      const w = opts.minorityWindows.find((win) => win.start <= o.call && o.ret! <= win.end && win.endpoints.includes(o.endpoint!));
      if (w) report('minority-answer', `op ${o.id} (${o.op}) was answered ok by ${o.endpoint} while it was on a minority side [${w.start.toFixed(1)}, ${w.end.toFixed(1)}]`, [o]);
    }
  }
  return out;
}

function checkFinal(key: string, final: FinalRead, kw: readonly Operation[], report: (i: InvariantName, m: string, o: Operation[]) => void): void {
  const token = (o: Operation): bigint => o.args.token!;
  const acc = kw.filter(isOk);
  const top = acc.reduce<Operation | undefined>((best, o) => (best === undefined || token(o) > token(best) ? o : best), undefined);
  if (top !== undefined && final.token < token(top)) {
    report('lost-write', `key ${key}: final watermark ${final.token} is below acknowledged write op ${top.id} (token ${token(top)})`, [top]);
    return;
  }
  if (!final.found && final.token === 0n) {
    if (acc.length > 0) report('lost-write', `key ${key}: not in the final state, though ${acc.length} write(s) were acknowledged`, acc.slice(0, 3));
    return;
  }
  const want = final.found ? final.value : null;
  const sources = kw.filter((o) => o.outcome !== 'fail' && token(o) === final.token && writtenValue(o, key) === want);
  if (sources.length === 0) {
    const what = final.found ? `value ${JSON.stringify(final.value)}` : 'a deletion';
    report('lost-write', `key ${key}: the final ${what} at watermark ${final.token} was written by no write that may have been applied`, acc.slice(-3));
    return;
  }
  // The final value must be from a write that no acknowledged write of the same token (the same holder)
  // followed in real time: an unknown-outcome source may have been applied late, after anything.
  const survivor = sources.find((x) => x.outcome === 'unknown' || !acc.some((w) => w !== x && token(w) === final.token && x.ret !== undefined && w.call > x.ret));
  if (!survivor) {
    const x = sources[0]!;
    const later = acc.find((w) => w !== x && token(w) === final.token && x.ret !== undefined && w.call > x.ret)!;
    report('lost-write', `key ${key}: final value is from write op ${x.id}, but acknowledged write op ${later.id} (same token) came after it`, [x, later]);
  }
}

/**
 * The grants (ids) that may repeat an older grant: their session asked the same lock or semaphore before
 * (an answer of unknown outcome, or any earlier grant of it), so the answer may be re-entrant.
 */
function repeatedGrants(ops: readonly Operation[]): Set<number> {
  const asked = new Set<string>();
  const out = new Set<number>();
  const targets = (o: Operation): string[] => (o.op === 'acquireAll' ? (o.args.locks ?? []) : o.op === 'acquirePermit' ? [`sem:${o.args.semaphore}`] : o.op === 'acquire' ? [o.args.lock!] : []);
  for (const o of [...ops].sort((x, y) => x.call - y.call || x.id - y.id)) {
    const keys = targets(o).map((t) => `${o.args.session}\u0000${t}`);
    if (keys.some((k) => asked.has(k))) out.add(o.id);
    if (o.outcome !== 'fail') for (const k of keys) asked.add(k);
  }
  return out;
}

/** The token a recorded grant answered (an AcquireAll: its first lock's; set-token checks the rest). */
function grantToken(o: Operation): bigint | undefined {
  if (o.op === 'acquireAll') return o.result?.tokens?.[0];
  return o.result?.token;
}

function checkIssue33(
  recorded: readonly Operation[],
  sharedGrants: readonly Operation[],
  accepted: readonly Operation[],
  repeats: ReadonlySet<number>,
  report: (i: InvariantName, m: string, o: Operation[]) => void,
): void {
  const sharedOf = new Map<string, Operation>();
  for (const g of sharedGrants) sharedOf.set(`${g.args.lock}\u0000${g.args.session}\u0000${g.result!.token!}`, g);
  for (const w of accepted) {
    const g = sharedOf.get(`${w.args.lock}\u0000${w.args.session}\u0000${w.args.token}`);
    if (g) report('shared-write', `lock ${w.args.lock}: write op ${w.id} accepted under token ${w.args.token}, a shared grant of its session (op ${g.id})`, [g, w]);
  }
  const grants = recorded.filter((o) => isOk(o) && (o.op === 'acquire' || o.op === 'acquirePermit' || o.op === 'acquireAll') && grantToken(o) !== undefined);
  for (const o of grants) {
    if (o.op === 'acquirePermit') {
      const slot = o.result!.slot!;
      if (!Number.isInteger(slot) || slot < 0 || slot >= o.args.permits!) report('permit-slot', `semaphore ${o.args.semaphore}: permit op ${o.id} got slot ${slot} of ${o.args.permits} permits`, [o]);
    }
    if (o.op === 'acquireAll') {
      const tokens = o.result!.tokens!;
      if (new Set(tokens.map(String)).size !== 1) report('set-token', `AcquireAll op ${o.id} of [${o.args.locks!.join(', ')}] answered tokens ${tokens.join(', ')}: not one grant`, [o]);
    }
  }
  const fresh = grants.filter((o) => !repeats.has(o.id));
  maxBefore(grants, fresh, (o) => grantToken(o)!, (x, g) => {
    if (g !== undefined && g !== x && grantToken(g)! >= grantToken(x)!) {
      report('grant-order', `${describeGrant(x)} op ${x.id} got token ${grantToken(x)}, called after ${describeGrant(g)} op ${g.id} had returned token ${grantToken(g)}: its entry came before`, [g, x]);
    }
  });
}

function describeGrant(o: Operation): string {
  if (o.op === 'acquireAll') return `AcquireAll [${o.args.locks!.join(', ')}]`;
  if (o.op === 'acquirePermit') return `permit of ${o.args.semaphore}`;
  return `${o.args.mode === 'shared' ? 'shared ' : ''}grant of ${resourceOf(o)}`;
}
