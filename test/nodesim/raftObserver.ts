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
 * - the disk's writes (SimDisk calls written()): log writes and commit claims.
 *
 * A violation is reported, never thrown into the node (where it would look like a storage failure).
 */
import type { NodeRuntime } from '../../src/node/runtime/nodeRuntime';
import type { RawNode } from '../../src/raft';
import { Role, type Entry, type Message, type PersistedState } from '../../src/raft/types';
import { crc32 } from '../../src/storage/checksum';
import type { LogView } from '../../src/storage/memoryStorage';
import type { PersistBatch } from '../../src/storage/types';
import type { PeerTransport } from '../../src/transport/peerTransport';
import { InvariantViolation, type Checker } from './raftInvariants';

export class RaftObserver {
  /** Messages of Ready.messages: sent before the write of their Ready syncs. */
  private readonly immediate = new WeakSet<Message>();
  private applied: number;
  private lastLeaderTerm = 0;
  private core: RawNode | undefined;

  constructor(
    private readonly checker: Checker,
    private readonly id: string,
    private readonly incarnation: number,
    private readonly written: LogView,
    private readonly report: (v: InvariantViolation) => void,
    loaded: PersistedState,
  ) {
    this.applied = loaded.snapshot?.meta.index ?? 0;
  }

  /** The disk took a batch (before it syncs). */
  onWrite(batch: PersistBatch): void {
    this.check(() => {
      this.checker.onLogWrite(this.id, this.written, batch.entries);
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
      if (st.role !== Role.Leader) return;
      this.checker.onLeader(this.id, st.term);
      // The written log is the core's own only once every entry it holds has been handed to storage.
      if (st.term !== this.lastLeaderTerm && !core.hasReady()) {
        this.lastLeaderTerm = st.term;
        this.checker.checkLeader(this.id, st.term, this.written, st.lastIndex);
      }
    });
  }

  private onReady(rd: ReturnType<RawNode['ready']>): void {
    for (const m of rd.messages) this.immediate.add(m);
    for (const rs of rd.readStates) this.checker.onReadState(this.id, hex(rs.context), rs.index);
    if (rd.snapshot) {
      this.checker.onSnapshotInstall(this.id, rd.snapshot.meta, crc32(rd.snapshot.data), this.applied);
      this.applied = rd.snapshot.meta.index;
    }
    this.onApply(rd.committedEntries);
  }

  private onApply(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    const term = this.core!.basicStatus().term;
    for (const e of entries) {
      this.checker.onApply(this.id, term, e, this.applied);
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
  node: { id: string; actor: { incarnation: number }; disk: { storage: { view(which: 'written'): LogView } } },
  report: (v: InvariantViolation) => void,
): (loaded: PersistedState) => RaftObserver {
  return (loaded) => new RaftObserver(checker, node.id, node.actor.incarnation, node.disk.storage.view('written'), report, loaded);
}
