/**
 * Connects one incarnation of a simulated node to the Raft checker (raftInvariants.ts). The node runs
 * unchanged; the observer wraps a few of its core's methods and its transport's send to see what the node
 * does, in the order it does it:
 *
 * - ready(): the messages to send before the Ready's write syncs, read states, a leader's snapshot to
 *   install, and the committed entries to apply (checked when handed out, which is no later than applied);
 * - takeCommittedEntries(): entries a leader applies early, while a write is in flight;
 * - readIndex(), compact(): reads issued, snapshots taken;
 * - transport.send(): every message leaving the node, knowing which were sent before their write synced;
 * - the disk's writes (SimDisk calls written()): log writes and commit claims;
 * - the configurations: each node's in force against the last configuration entry of its written log (or its
 *   snapshot's, or its bootstrap one), each configuration entry against the one before it, a leader's
 *   uncommitted changes and its votes against its configuration.
 *
 * A violation is reported, never thrown into the node (where it would look like a storage failure).
 */
import type { NodeRuntime } from '../../src/node/runtime/nodeRuntime';
import type { RawNode } from '../../src/raft';
import { decodeConfigEntry, fullConfig, type FullConfig } from '../../src/raft/confChange';
import { EntryType, Role, type Entry, type Message, type PersistedState } from '../../src/raft/types';
import { crc32 } from '../../src/storage/checksum';
import type { LogView } from '../../src/storage/memoryStorage';
import type { PersistBatch } from '../../src/storage/types';
import type { PeerTransport } from '../../src/transport/peerTransport';
import { InvariantViolation, type Checker } from './raftInvariants';
import { WrittenConfigs } from './writtenConfigs';

export class RaftObserver {
  /** Messages of Ready.messages: sent before the write of their Ready syncs. */
  private readonly immediate = new WeakSet<Message>();
  private applied: number;
  private lastLeaderTerm = 0;
  private electedTerm = 0;
  /** The last entry and the snapshot a Ready handed out, until the disk has them. */
  private unwritten: { entry?: Entry; snapshotIndex?: number } = {};
  private core: RawNode | undefined;
  /** Snapshot index -> the configuration it carries (loaded, taken or installed by this incarnation). */
  private readonly snapshotConfigs = new Map<number, FullConfig>();
  private readonly configEntries: WrittenConfigs;

  constructor(
    private readonly checker: Checker,
    private readonly id: string,
    private readonly incarnation: number,
    private readonly written: LogView,
    private readonly report: (v: InvariantViolation) => void,
    loaded: PersistedState,
    /** The configuration of an empty log (the node's file; a joining node's own as a learner). */
    private readonly bootstrap: FullConfig,
  ) {
    this.applied = loaded.snapshot?.meta.index ?? 0;
    this.configEntries = new WrittenConfigs(written);
    if (loaded.snapshot) this.snapshotConfigs.set(loaded.snapshot.meta.index, fullConfig(loaded.snapshot.meta.config));
  }

  /** The configuration in force at `index` of the written log, as this observer reads it (undefined: unknown). */
  private configAt(index: number): FullConfig | undefined {
    const log = this.written;
    const e = this.configEntries.lastAtOrBelow(index);
    if (e !== undefined) {
      const c = decodeConfigEntry(e.data);
      return typeof c === 'string' ? undefined : c;
    }
    if (index < log.snapshotIndex) return undefined;
    return log.snapshotIndex === 0 ? this.bootstrap : this.snapshotConfigs.get(log.snapshotIndex);
  }

  /** The disk took a batch (before it syncs). */
  onWrite(batch: PersistBatch): void {
    this.configEntries.written(batch.entries);
    this.check(() => {
      this.checker.onLogWrite(this.id, this.written, batch.entries);
      for (const e of batch.entries) {
        if (e.type !== EntryType.ConfChange) continue;
        const prev = this.configAt(e.index - 1);
        const next = decodeConfigEntry(e.data);
        // A joining node's bootstrap configuration (itself a learner) is its own, not the cluster's at any index.
        const joinerBootstrap = prev === this.bootstrap && this.bootstrap.learners.includes(this.id);
        if (prev !== undefined && !joinerBootstrap && typeof next !== 'string') this.checker.onConfigEntry(this.id, e.index, prev, next);
      }
      const hs = batch.hardState;
      if (hs) this.checker.onCommitClaim(this.id, hs.term, hs.commit, this.written);
    });
  }

  /** The runtime started from `loaded`: wrap its core and transport. */
  attach(runtime: NodeRuntime, transport: PeerTransport, loaded: PersistedState): void {
    const core = runtime.driver.core;
    this.core = core;
    this.check(() => this.checker.onRestart(this.id, loaded, core.basicStatus()));
    const ready = core.ready.bind(core);
    core.ready = () => {
      const rd = ready();
      this.check(() => this.onReady(rd));
      return rd;
    };
    const take = core.takeCommittedEntries.bind(core);
    core.takeCommittedEntries = () => {
      const entries = take();
      this.check(() => this.onApply(entries));
      return entries;
    };
    const readIndex = core.readIndex.bind(core);
    core.readIndex = (context: Uint8Array) => {
      this.check(() => this.checker.onReadRequest(hex(context)));
      readIndex(context);
    };
    const compact = core.compact.bind(core);
    core.compact = (index: number, data: Uint8Array) => {
      const snapshot = compact(index, data);
      this.snapshotConfigs.set(snapshot.meta.index, fullConfig(snapshot.meta.config));
      this.check(() => this.checker.onSnapshotTaken(this.id, index, crc32(data)));
      return snapshot;
    };
    const send = transport.send.bind(transport);
    transport.send = (messages: Message[]) => {
      this.check(() => {
        for (const m of messages) this.checker.onSend(m, this.written, this.immediate.has(m));
      });
      send(messages);
    };
  }

  /** After an event of this node: statuses only move forward, and a new leader holds every committed entry. */
  observe(): void {
    const core = this.core;
    if (!core) return;
    this.check(() => {
      const st = core.basicStatus();
      this.checker.onStatus(this.id, this.incarnation, st);
      const settled = this.writtenIsCore(st);
      const expected = settled ? this.configAt(st.lastIndex) : undefined;
      if (expected !== undefined) this.checker.onNodeConfig(this.id, core.config(), expected);
      if (st.role !== Role.Leader) return;
      this.checker.onLeader(this.id, st.term);
      if (st.term !== this.electedTerm) {
        this.electedTerm = st.term;
        this.checker.onElected(this.id, st.term, core.config().voters);
      }
      if (settled) this.checker.onLeaderLog(this.id, st.term, st.commit, this.written);
      // The written log is the core's own only once every entry it holds has been handed to storage.
      if (st.term !== this.lastLeaderTerm && !core.hasReady()) {
        this.lastLeaderTerm = st.term;
        this.checker.checkLeader(this.id, st.term, this.written, st.lastIndex);
      }
    });
  }

  /**
   * The written log is the core's once every entry and snapshot handed out reached the disk and the core
   * holds no entry it has not persisted (one appended while a Ready is outstanding waits for the next).
   */
  private writtenIsCore(st: { lastIndex: number; snapshotIndex: number; stableIndex: number }): boolean {
    const w = this.written;
    const { entry, snapshotIndex } = this.unwritten;
    if (entry !== undefined && w.term(entry.index) === entry.term) this.unwritten.entry = undefined;
    if (snapshotIndex !== undefined && w.snapshotIndex >= snapshotIndex) this.unwritten.snapshotIndex = undefined;
    const pending = this.unwritten.entry !== undefined || this.unwritten.snapshotIndex !== undefined;
    return !pending && !this.core!.hasReady() && st.stableIndex === st.lastIndex && w.lastIndex === st.lastIndex && w.snapshotIndex === st.snapshotIndex;
  }

  private onReady(rd: ReturnType<RawNode['ready']>): void {
    if (rd.entries.length > 0) this.unwritten.entry = rd.entries.at(-1);
    if (rd.snapshot) this.unwritten.snapshotIndex = rd.snapshot.meta.index;
    for (const m of rd.messages) this.immediate.add(m);
    for (const rs of rd.readStates) this.checker.onReadState(this.id, hex(rs.context), rs.index);
    if (rd.snapshot) {
      this.snapshotConfigs.set(rd.snapshot.meta.index, fullConfig(rd.snapshot.meta.config));
      this.checker.onSnapshotInstall(this.id, rd.snapshot.meta, crc32(rd.snapshot.data), this.applied);
      this.applied = rd.snapshot.meta.index;
    }
    this.onApply(rd.committedEntries);
  }

  private onApply(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    const term = this.core!.basicStatus().term;
    for (const e of entries) {
      this.checker.onApply(this.id, term, e, this.applied, this.configAt(e.index)?.voters, this.core!.config().voters);
      this.applied = e.index;
    }
  }

  private check(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      if (err instanceof InvariantViolation) this.report(err);
      else throw err;
    }
  }
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/** What SimNode.start takes: an observer for each new incarnation of `node`, all feeding one checker. */
export function observerFactory(
  checker: Checker,
  node: { id: string; actor: { incarnation: number }; disk: { storage: { view(which: 'written'): LogView } }; bootstrap: FullConfig },
  report: (v: InvariantViolation) => void,
): (loaded: PersistedState) => RaftObserver {
  return (loaded) => new RaftObserver(checker, node.id, node.actor.incarnation, node.disk.storage.view('written'), report, loaded, node.bootstrap);
}
