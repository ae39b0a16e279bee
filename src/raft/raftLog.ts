// The replicated log as the core sees it: the latest snapshot, then every entry after it, in memory.
//
//   snapshot.index  <=  applied <= applying <= committed,  stable <= lastIndex
//   entries (snapshot.index, stable]      are durable (persisted by an earlier Ready)
//   entries (stable, lastIndex]           are handed to the caller by the next Ready
//   entries (applied, applying]           were handed out to be applied, not yet reported applied
//   entries (applying, min(committed, stable)] are the next to hand out
//
// The whole log after the snapshot is kept in memory; the application bounds it with compact().

import { storedConfig } from './confChange';
import { invariant } from './errors';
import type { ClusterConfig, Entry, Snapshot } from './types';

export type AppendOutcome =
  | { kind: 'matched'; lastNew: number }
  | { kind: 'mismatch' }
  | { kind: 'overwrites-committed'; index: number };

export function entryBytes(e: Entry): number {
  return e.data.byteLength;
}

export class RaftLog {
  /** The latest snapshot; undefined while the log still starts at index 1. */
  snapshot: Snapshot | undefined;
  /** A snapshot restored from a leader but not yet handed out, persisted and installed. */
  pendingSnapshot: Snapshot | undefined;
  committed: number;
  /** Last index the caller reported applied. */
  applied: number;
  /** Last index handed out to be applied (in a Ready or by takeCommittedEntries). */
  applying: number;
  /** Last index known durable. */
  stable: number;
  private snapIndex: number;
  private snapTerm: number;
  private entries: Entry[];

  /**
   * Restores a log from persisted state: everything handed in is durable. `onAppend` hears of every append
   * (with the entries that replace everything from their first index on): membership follows the log.
   */
  constructor(
    snapshot: Snapshot | undefined,
    entries: readonly Entry[],
    commit: number,
    private readonly onAppend: (ents: readonly Entry[]) => void = () => undefined,
  ) {
    this.snapshot = snapshot;
    this.snapIndex = snapshot?.meta.index ?? 0;
    this.snapTerm = snapshot?.meta.term ?? 0;
    // Storage may lag behind its own compaction: skip entries the snapshot already covers.
    this.entries = entries.filter((e) => e.index > this.snapIndex);
    let prev = { index: this.snapIndex, term: this.snapTerm };
    for (const e of this.entries) {
      invariant(e.index === prev.index + 1, `persisted entries not contiguous at index ${e.index}`);
      invariant(e.term >= prev.term, `persisted entry terms go back at index ${e.index}`);
      prev = e;
    }
    this.committed = Math.max(commit, this.snapIndex);
    invariant(this.committed <= this.lastIndex(), `persisted commit ${commit} beyond last index ${this.lastIndex()}`);
    this.applied = this.snapIndex;
    this.applying = this.snapIndex;
    this.stable = this.lastIndex();
  }

  firstIndex(): number {
    return this.snapIndex + 1;
  }

  lastIndex(): number {
    return this.snapIndex + this.entries.length;
  }

  snapshotIndex(): number {
    return this.snapIndex;
  }

  lastTerm(): number {
    const t = this.term(this.lastIndex());
    invariant(t !== undefined, 'the last index always has a term');
    return t;
  }

  /** Term of the entry at `i`, or undefined when it is compacted away or beyond the end. */
  term(i: number): number | undefined {
    if (i === this.snapIndex) return this.snapTerm;
    if (i < this.snapIndex || i > this.lastIndex()) return undefined;
    return this.entryAt(i).term;
  }

  /** The entry at `i`, which the caller knows is in (snapIndex, lastIndex]. */
  private entryAt(i: number): Entry {
    const e = this.entries[i - this.snapIndex - 1];
    invariant(e !== undefined, 'entry index outside (snapshot index, last index]'); // no closure: term() is hot
    return e;
  }

  matchTerm(i: number, t: number): boolean {
    return this.term(i) === t;
  }

  /** Raft's election restriction (paper 5.4.1): is a log ending at (lastIndex, lastTerm) at least as up to date? */
  isUpToDate(lastIndex: number, lastTerm: number): boolean {
    const ours = this.lastTerm();
    return lastTerm > ours || (lastTerm === ours && lastIndex >= this.lastIndex());
  }

  /** Entries lo..hi (inclusive) whose summed data fits in maxBytes, but at least one. */
  slice(lo: number, hi: number, maxBytes: number): Entry[] {
    invariant(lo >= this.firstIndex() && hi <= this.lastIndex(), () => `slice [${lo},${hi}] out of range`);
    const out: Entry[] = [];
    let bytes = 0;
    for (let i = lo; i <= hi; i++) {
      const e = this.entryAt(i);
      bytes += entryBytes(e);
      if (out.length > 0 && bytes > maxBytes) break;
      out.push(e);
    }
    return out;
  }

  /**
   * Fast backtracking (etcd's findConflictByTerm): the largest index <= `index` whose term is <= `term`,
   * with its term. Entries in between cannot match an entry of term `term`, so they are skipped whole.
   * Stops at the compaction point, where terms are unknown.
   */
  findConflictByTerm(index: number, term: number): { index: number; term: number } {
    for (let i = Math.min(index, this.lastIndex()); i > 0; i--) {
      const t = this.term(i);
      if (t === undefined) return { index: i, term: 0 };
      if (t <= term) return { index: i, term: t };
    }
    return { index: 0, term: 0 };
  }

  /**
   * The AppendEntries consistency check and append (paper Figure 2, receiver rules 2-4). Commits nothing:
   * the caller knows how far the sender's log is known to match ours (rule 5 is min(leaderCommit, lastNew)).
   * - matched: the entries up to `lastNew` (the last one the leader sent) now match the leader's log;
   * - mismatch: we lack the entry at `prevIndex` or hold it with another term;
   * - overwrites-committed: the entries conflict with one of ours that is committed. A leader can never
   *   send that (Leader Completeness), so the message is forged or corrupt: nothing is changed.
   */
  maybeAppend(prevIndex: number, prevTerm: number, ents: readonly Entry[]): AppendOutcome {
    if (!this.matchTerm(prevIndex, prevTerm)) return { kind: 'mismatch' };
    const lastNew = prevIndex + ents.length;
    const conflict = ents.find((e) => !this.matchTerm(e.index, e.term));
    if (conflict !== undefined) {
      if (conflict.index <= this.committed) return { kind: 'overwrites-committed', index: conflict.index };
      this.append(ents.slice(conflict.index - prevIndex - 1));
    }
    return { kind: 'matched', lastNew };
  }

  /** Appends `ents`, first deleting any entry at or after ents[0].index. */
  append(ents: readonly Entry[]): void {
    const [head] = ents;
    if (head === undefined) return;
    const first = head.index;
    invariant(first > this.committed, () => `append at ${first} would overwrite committed ${this.committed}`);
    invariant(first <= this.lastIndex() + 1, () => `append at ${first} leaves a gap after ${this.lastIndex()}`);
    this.entries.length = first - this.snapIndex - 1;
    for (const e of ents) this.entries.push(e);
    this.onAppend(ents);
    // Truncated entries must be written again, so durability falls back to before the conflict.
    if (this.stable >= first) this.stable = first - 1;
  }

  commitTo(i: number): void {
    if (i <= this.committed) return; // commit never goes back: older information is simply ignored
    invariant(i <= this.lastIndex(), () => `commit ${i} beyond last index ${this.lastIndex()}`);
    this.committed = i;
  }

  /**
   * Hands out the next entries to apply: durable and committed, at most maxBytes (but at least one). They
   * count as applying until the caller reports them applied.
   */
  takeNextCommitted(maxBytes: number): Entry[] {
    if (!this.hasNextCommittedEntries()) return [];
    const entries = this.slice(this.applying + 1, Math.min(this.committed, this.stable), maxBytes);
    const last = entries.at(-1);
    invariant(last !== undefined, 'slice returns at least one entry');
    this.applying = last.index;
    return entries;
  }

  hasNextCommittedEntries(): boolean {
    // A leader's snapshot waiting to be installed comes first: entries after it build on it.
    return this.pendingSnapshot === undefined && this.applying < Math.min(this.committed, this.stable);
  }

  /** The caller applied every entry up to `i`; only entries handed out can have been. */
  appliedTo(i: number): void {
    invariant(i >= this.applied, () => `applied goes back from ${this.applied} to ${i}`);
    invariant(i <= this.applying, () => `applied ${i} beyond the entries handed out (${this.applying})`);
    this.applied = i;
  }

  unstableEntries(): Entry[] {
    return this.entries.slice(this.stable - this.snapIndex);
  }

  hasUnstableEntries(): boolean {
    return this.stable < this.lastIndex();
  }

  /**
   * A Ready holding `ents` was persisted. If the log was truncated meanwhile, only the entries that are
   * still ours count: by Log Matching, the highest one still matching implies all before it do.
   */
  stableTo(ents: readonly Entry[]): void {
    // A snapshot restored meanwhile replaces the stored log wholesale in its own Ready.
    if (this.pendingSnapshot !== undefined) return;
    for (let k = ents.length - 1; k >= 0; k--) {
      const e = ents[k];
      invariant(e !== undefined, 'k is within ents by the loop condition');
      if (e.index <= this.stable) return;
      if (this.matchTerm(e.index, e.term)) {
        this.stable = e.index;
        return;
      }
    }
  }

  /**
   * Installs a leader's snapshot newer than our commit (paper Figure 13): if our log has the snapshot's
   * last entry, the entries after it are kept; otherwise the whole log is discarded. Kept entries are
   * re-marked unstable because the Ready carrying a snapshot replaces the whole stored log.
   */
  restore(snap: Snapshot): void {
    invariant(snap.meta.index > this.committed, 'restoring a snapshot that is not newer than commit');
    const keep = this.matchTerm(snap.meta.index, snap.meta.term)
      ? this.entries.slice(snap.meta.index - this.snapIndex)
      : [];
    this.entries = keep;
    this.snapshot = snap;
    this.pendingSnapshot = snap;
    this.snapIndex = snap.meta.index;
    this.snapTerm = snap.meta.term;
    this.committed = snap.meta.index;
    this.stable = snap.meta.index;
  }

  /** The caller persisted and installed `snap`, a leader's snapshot newer than anything applied here. */
  snapshotInstalled(snap: Snapshot): void {
    invariant(snap.meta.index > this.applying, () => `installed snapshot ${snap.meta.index} is not above applying ${this.applying}`);
    if (this.pendingSnapshot === snap) this.pendingSnapshot = undefined;
    this.applying = snap.meta.index;
    this.applied = snap.meta.index;
  }

  /** The application's snapshot at `index` (<= applied) replaces the entries up to it. */
  compact(index: number, data: Uint8Array, config: ClusterConfig, crc32: number): void {
    invariant(index <= this.applied, () => `compact(${index}) beyond applied ${this.applied}`);
    if (index <= this.snapIndex) return;
    const term = this.term(index);
    invariant(term !== undefined, () => `compact(${index}): no term at an index in (snapshot, applied]`);
    this.entries = this.entries.slice(index - this.snapIndex);
    this.snapshot = { meta: { index, term, config: storedConfig(config), crc32 }, data };
    this.snapIndex = index;
    this.snapTerm = term;
  }
}
