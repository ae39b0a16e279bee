// What each identity uses of the state, for its quotas (docs/auth.md "Quotas"): the sessions it opened, the
// locks they hold and wait for, and the keys of the fenced store it wrote last (their number and bytes).
//
// Derived, never snapshotted: sessions point at their caller's record (Session.usage) and keep it counted
// through the hooks of records.ts; keys name their payer (KvRecord.payer) and the machine charges and
// uncharges them around every write. A restore recounts everything (recount), checkInvariants compares.
// Caller '' (the node itself, old logs) is counted nowhere. A record whose counts are all 0 is dropped.
import type { WriteOp } from './writeOps';
import type { FencedKv, KvRecord } from './fencedKv';
import { sharingCount, waitingCount, type Session, type Usage } from './records';
import { utf8ByteLength } from './text';

export type { Usage };

export type UsageCounts = Omit<Usage, 'caller'>;

/** What a write of `ops` by `payer` adds to its usage: keys it does not pay for yet, and bytes. */
export function writeCharge(kv: FencedKv, ops: readonly WriteOp[], payer: string): { keys: number; bytes: number } {
  const finalValue = new Map<string, Uint8Array | null>();
  for (const op of ops) finalValue.set(op.key, op.type === 'put' ? op.value : null);
  let keys = 0;
  let bytes = 0;
  for (const [key, value] of finalValue) {
    const r = kv.record(key);
    const cost = keyCost({ key, value });
    if (r === undefined || r.payer !== payer) {
      keys++;
      bytes += cost;
    } else {
      bytes += cost - keyCost(r);
    }
  }
  return { keys, bytes };
}

/** The bytes a key costs its payer: its UTF-8 key bytes and its value (as MAX_STORE_BYTES counts them). */
export function keyCost(r: Pick<KvRecord, 'key' | 'value'>): number {
  return utf8ByteLength(r.key) + (r.value?.length ?? 0);
}

export class UsageTable {
  private readonly byCaller = new Map<string, Usage>();

  /** The record of `caller`, made if needed; null for '' (not counted). */
  of(caller: string): Usage | null {
    if (caller === '') return null;
    let u = this.byCaller.get(caller);
    if (u === undefined) {
      u = { caller, sessions: 0, locks: 0, waiters: 0, keys: 0, storeBytes: 0 };
      this.byCaller.set(caller, u);
    }
    return u;
  }

  /** The record of `caller`, undefined when it uses nothing. */
  get(caller: string): Usage | undefined {
    return this.byCaller.get(caller);
  }

  /** What `caller` uses now (all 0 for an identity that uses nothing). */
  counts(caller: string): UsageCounts {
    const u = this.byCaller.get(caller);
    return { sessions: u?.sessions ?? 0, locks: u?.locks ?? 0, waiters: u?.waiters ?? 0, keys: u?.keys ?? 0, storeBytes: u?.storeBytes ?? 0 };
  }

  /** Drops the record once it counts nothing (bounded memory: identities come and go). */
  collect(u: Usage | null): void {
    if (u !== null && u.sessions === 0 && u.locks === 0 && u.waiters === 0 && u.keys === 0 && u.storeBytes === 0) this.byCaller.delete(u.caller);
  }

  /** Adds the key to its payer's usage. */
  charge(r: KvRecord): void {
    const u = this.of(r.payer);
    if (u === null) return;
    u.keys++;
    u.storeBytes += keyCost(r);
  }

  /** Takes the key from its payer's usage (before it changes or moves to another payer). */
  uncharge(r: KvRecord): void {
    const u = this.byCaller.get(r.payer);
    if (u === undefined) return;
    u.keys--;
    u.storeBytes -= keyCost(r);
    this.collect(u);
  }

  /** After a restore (into an empty table): every session counts for its owner, every key for its payer. */
  restore(sessions: Iterable<Session>, keys: Iterable<KvRecord>): void {
    for (const s of sessions) {
      s.usage = this.of(s.owner);
      if (s.usage === null) continue;
      s.usage.sessions++;
      s.usage.locks += s.heldCount + sharingCount(s);
      s.usage.waiters += waitingCount(s);
    }
    for (const r of keys) this.charge(r);
  }

  /** Self-check against a recount (`expected`, by caller): equal records, none kept at zero. */
  check(expected: ReadonlyMap<string, UsageCounts>): string[] {
    const p: string[] = [];
    for (const [caller, u] of this.byCaller) {
      const e = expected.get(caller);
      const { caller: _, ...counts } = u;
      if (e === undefined) p.push(`usage of ${JSON.stringify(caller)} kept while it uses nothing`);
      else if (JSON.stringify(counts) !== JSON.stringify(e)) p.push(`usage of ${JSON.stringify(caller)} is ${JSON.stringify(counts)}, counts ${JSON.stringify(e)}`);
    }
    for (const caller of expected.keys()) if (!this.byCaller.has(caller)) p.push(`usage of ${JSON.stringify(caller)} is not kept`);
    return p;
  }
}

/** What each caller uses, counted from scratch (sessions by owner, keys by payer): for the self-check. */
export function recountUsage(sessions: Iterable<Session>, keys: Iterable<KvRecord>): Map<string, UsageCounts> {
  const counts = new Map<string, UsageCounts>();
  const of = (caller: string): UsageCounts => {
    let c = counts.get(caller);
    if (c === undefined) {
      c = { sessions: 0, locks: 0, waiters: 0, keys: 0, storeBytes: 0 };
      counts.set(caller, c);
    }
    return c;
  };
  for (const s of sessions) {
    if (s.owner === '') continue;
    const c = of(s.owner);
    c.sessions++;
    c.locks += s.heldCount + sharingCount(s);
    c.waiters += waitingCount(s);
  }
  for (const r of keys) {
    if (r.payer === '') continue;
    const c = of(r.payer);
    c.keys++;
    c.storeBytes += keyCost(r);
  }
  return counts;
}
