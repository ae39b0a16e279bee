// Projects issue 33's operations onto the one-resource model of model.ts, so that the checker can stay
// partitioned per resource (linearizability.ts, "The algorithm"):
//
// - a semaphore slot is a resource of its own (checkedSlot): one holder per slot, a watermark per slot
//   (docs/architecture.md#semaphores, "Fencing is per slot"). A granted permit is an exclusive acquire of
//   its slot; releasePermit and writes under a permit are a release and a write of that slot.
//   A permit acquire of unknown outcome may have been granted ANY slot: it becomes an unknown acquire of
//   every slot 0..permits-1 (the search may take it in none, one or several: more permissive than the
//   service, never less, so no false violation). A refused permit acquire (PERMITS_FULL: every slot was
//   taken; PERMITS_MISMATCH) is left out: the first is a fact about all slots together, which one slot's
//   partition cannot judge.
// - an AcquireAll of locks L1..Ln becomes one acquire of each Li (exclusive; ok: with the token the client
//   handed out for Li; unknown: unknown on each). A refused AcquireAll is left out: "held" may mean that ONE
//   of its locks was busy (or only awaited), which says nothing about each lock alone.
// - a refused single acquire (LOCK_HELD) of a lock that some AcquireAll names is left out too: a set waiting
//   at the head of a free lock's queue keeps that lock free and refuses try-locks (BUSY_SET_WAITING), so
//   "refused" does not mean "held" there (docs/architecture.md#atomic-multi-lock, "Fairness").
//
// What projecting an AcquireAll loses is that its locks were granted at ONE point (one log entry). The
// cross-lock invariants (invariants.ts: set-token, set-order) check what a client can see of that. Why the
// projection is sound: every linearization of the whole history, restricted to one resource, is a
// linearization of that resource's projection (the atomic step restricted to one lock is an acquire of that
// lock), so a projection that cannot be linearized proves the history cannot: a violation reported is real.
// The converse does not hold (per-lock points of one set may disagree); the invariants narrow that gap.
//
// Projected operations keep their id, so a report names the operation the client made.
import { checkedSlot, type Operation } from './history';

/** The locks some AcquireAll of the history names. */
function setLocks(ops: readonly Operation[]): Set<string> {
  const out = new Set<string>();
  for (const o of ops) if (o.op === 'acquireAll') for (const l of o.args.locks ?? []) out.add(l);
  return out;
}

function asAcquire(o: Operation, lock: string, token: bigint | undefined): Operation {
  const args = { lock, session: o.args.session!, waitMs: o.args.waitMs ?? 0 };
  const p: Operation = { ...o, op: 'acquire', args };
  if (token !== undefined) p.result = { token };
  return p;
}

function projectOne(o: Operation, inSets: ReadonlySet<string>, out: Operation[]): void {
  const a = o.args;
  switch (o.op) {
    case 'acquirePermit': {
      if (o.outcome === 'ok') out.push(asAcquire(o, checkedSlot(a.semaphore!, o.result!.slot!), o.result!.token!));
      else if (o.outcome === 'unknown') for (let slot = 0; slot < a.permits!; slot++) out.push(asAcquire(o, checkedSlot(a.semaphore!, slot), undefined));
      return;
    }
    case 'releasePermit':
      out.push({ ...o, op: 'release', args: { lock: checkedSlot(a.semaphore!, a.slot!), session: a.session!, token: a.token! } });
      return;
    case 'acquireAll': {
      if (o.outcome === 'fail') return;
      a.locks!.forEach((lock, i) => out.push(asAcquire(o, lock, o.outcome === 'ok' ? o.result!.tokens![i]! : undefined)));
      return;
    }
    case 'write':
      if (a.semaphore !== undefined) {
        const { semaphore: _s, slot: _n, ...rest } = a;
        out.push({ ...o, args: { ...rest, lock: checkedSlot(a.semaphore, a.slot!) } });
        return;
      }
      out.push(o);
      return;
    case 'acquire':
      if (o.outcome === 'fail' && inSets.has(a.lock!)) return;
      out.push(o);
      return;
    default:
      out.push(o);
  }
}

/** The history as operations of one resource each (acquire, release, write, get, close, open, keepalive). */
export function projectHistory(ops: readonly Operation[]): Operation[] {
  const inSets = setLocks(ops);
  const out: Operation[] = [];
  for (const o of ops) projectOne(o, inSets, out);
  return out;
}
