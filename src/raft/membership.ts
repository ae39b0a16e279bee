// Which configuration is in force at each point of the log.
//
// A node always runs with the configuration of the LAST ConfChange entry in its log, committed or not
// (dissertation §4.1); entries removed by a conflicting append take their configurations with them, and the
// configuration before the first ConfChange entry is the snapshot's (or, on a log that starts at index 1,
// the bootstrap configuration from the node's own settings).

import { decodeConfigEntry, type FullConfig } from './confChange';
import { invariant } from './errors';
import { EntryType, type Entry, type NodeId } from './types';

interface ConfigAt {
  index: number;
  config: FullConfig;
}

export class Membership {
  /** The configuration at the snapshot's index (or before index 1). */
  private base: FullConfig;
  /** ConfChange entries after the snapshot, in log order. */
  private changes: ConfigAt[] = [];

  constructor(base: FullConfig, entries: readonly Entry[]) {
    this.base = base;
    this.appended(entries);
  }

  current(): FullConfig {
    return this.changes.at(-1)?.config ?? this.base;
  }

  /** Index of the newest ConfChange entry in the log, or 0 when it holds none after the snapshot. */
  lastChangeIndex(): number {
    return this.changes.at(-1)?.index ?? 0;
  }

  /** Members removed by ConfChange entries still in the log (after the snapshot), oldest first. */
  removedInLog(): NodeId[] {
    const before = new Set(this.base.removed);
    return this.current().removed.filter((id) => !before.has(id));
  }

  /** The configuration in force at `index` (>= the snapshot's index). */
  at(index: number): FullConfig {
    let config = this.base;
    for (const c of this.changes) {
      if (c.index > index) break;
      config = c.config;
    }
    return config;
  }

  /**
   * `entries` were appended, replacing any entry at or after the first of them. The caller has validated
   * their configurations (RawNode refuses an append carrying a malformed one before it reaches the log).
   */
  appended(entries: readonly Entry[]): void {
    const [first] = entries;
    if (first === undefined) return;
    while ((this.changes.at(-1)?.index ?? 0) >= first.index) this.changes.pop();
    for (const e of entries) {
      if (e.type !== EntryType.ConfChange) continue;
      const config = decodeConfigEntry(e.data);
      invariant(typeof config !== 'string', () => `ConfChange entry ${e.index} in the log is malformed: ${String(config)}`);
      this.changes.push({ index: e.index, config });
    }
  }

  /** A snapshot at `index` with `config` replaced the log; `keptEntries`: the entries after it were kept. */
  restored(index: number, config: FullConfig, keptEntries: boolean): void {
    this.base = config;
    this.changes = keptEntries ? this.changes.filter((c) => c.index > index) : [];
  }

  /** The log was compacted up to `index`: its configuration becomes the base. */
  compacted(index: number): void {
    this.base = this.at(index);
    this.changes = this.changes.filter((c) => c.index > index);
  }
}
