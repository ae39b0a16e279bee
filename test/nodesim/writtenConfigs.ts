/**
 * Where the configuration entries of one node's written log are, kept up to date from its writes, so that
 * the observer finds the configuration in force at an index without walking the log back to its snapshot on
 * every applied entry and every event (that walk grew with the log between snapshots).
 */
import { EntryType, type Entry } from '../../src/raft/types';
import type { LogView } from '../../src/storage/memoryStorage';

export class WrittenConfigs {
  /**
   * Indexes that held a configuration entry when written, ascending; those a snapshot has covered since are
   * skipped when read.
   */
  private readonly indexes: number[] = [];

  constructor(private readonly log: LogView) {
    for (let i = log.snapshotIndex + 1; i <= log.lastIndex; i++) {
      if (log.entry(i)?.type === EntryType.ConfChange) this.indexes.push(i);
    }
  }

  /** A batch of entries was written: it replaced whatever the log held from its first index on. */
  written(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    const first = entries[0]!.index;
    while (this.indexes.length > 0 && this.indexes.at(-1)! >= first) this.indexes.pop();
    for (const e of entries) if (e.type === EntryType.ConfChange) this.indexes.push(e.index);
  }

  /** The last configuration entry at or below `index` still in the log above its snapshot, if any. */
  lastAtOrBelow(index: number): Entry | undefined {
    const log = this.log;
    const top = Math.min(index, log.lastIndex);
    for (let k = this.indexes.length - 1; k >= 0; k--) {
      const i = this.indexes[k]!;
      if (i <= log.snapshotIndex) return undefined;
      if (i > top) continue;
      const e = log.entry(i);
      if (e?.type === EntryType.ConfChange) return e;
    }
    return undefined;
  }
}
