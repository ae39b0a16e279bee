// Regression (issue 11, defect 4): a follower whose own snapshot fell due while a snapshot from the leader
// was pending compacted anyway; compact() then handed storage the leader's snapshot as if it were the
// follower's own, storage refused it, and the follower stopped. It now skips compaction until the leader's
// snapshot is installed.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { LockApp } from '../../src/node/lockApp';
import { RaftDriver, type DriverBugs, type PeerTransport } from '../../src/node/raftDriver';
import { realPorts } from '../../src/node/runtime/realPorts';
import { crc32 } from '../../src/raft/crc32';
import { makeMessage, type WireFields } from '../../src/raft/messages';
import { EntryType, MessageType, type Entry, type Message, type NodeId } from '../../src/raft/types';
import { MemoryStorage } from '../../src/storage/memoryStorage';
import type { PersistBatch } from '../../src/storage/types';

const VOTERS = ['n1', 'n2', 'n3'];

class FakeTransport implements PeerTransport {
  handler: ((messages: Message[]) => void) | undefined;
  send(): void {}
  onMessages(handler: (messages: Message[]) => void): void {
    this.handler = handler;
  }
  onUnreachable(_handler: (peer: NodeId) => void): void {}
  async close(): Promise<void> {}
}

/** MemoryStorage whose persist() completes only when the test opens the gate: an fsync the test times. */
class GatedStorage extends MemoryStorage {
  private gates: Array<() => void> = [];
  persisting = 0;
  /** Once set, every fsync completes at once. */
  gateless = false;
  override async persist(batch: PersistBatch): Promise<void> {
    this.write(batch);
    this.persisting++;
    if (!this.gateless) await new Promise<void>((resolve) => this.gates.push(resolve));
    this.sync();
    this.persisting--;
  }
  openGates(): void {
    for (const open of this.gates.splice(0)) open();
  }
}

const noop = (index: number): Entry => ({ term: 2, index, type: EntryType.Normal, data: new Uint8Array(0) });
const message = (fields: Omit<WireFields, 'from' | 'to' | 'term'>): Message => makeMessage({ from: 'n1', to: 'n2', term: 2, ...fields });

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('defect 4: a follower compacting while a snapshot from the leader is pending', () => {
  let driver: RaftDriver<unknown> | undefined;
  afterEach(async () => {
    await driver?.stop(0);
    driver = undefined;
  });

  async function snapshotArrivesDuringFsync(plantedBugs?: DriverBugs): Promise<{ fatal?: Error; snapshotIndex: number }> {
    const storage = new GatedStorage();
    const transport = new FakeTransport();
    const d = (await RaftDriver.start({
      raft: { id: 'n2', voters: VOTERS, electionTicks: 1_000, heartbeatTicks: 1, random: () => 0 },
      storage,
      transport,
      app: new LockApp(),
      tickMs: 60_000,
      snapshotEveryEntries: 1,
      logger: pino({ level: 'silent' }),
      ports: realPorts(),
      plantedBugs,
    })) as RaftDriver<unknown>;
    driver = d;
    let fatal: Error | undefined;
    d.on('fatal', (err: Error) => (fatal = err));
    // Entries 1-3 from the leader, stored.
    transport.handler!([message({ type: MessageType.App, entries: [noop(1), noop(2), noop(3)] })]);
    await until(() => storage.persisting === 1, 'the first fsync');
    storage.openGates();
    await until(() => storage.persisting === 0, 'the first fsync to end');
    // Entries 4-5 with commit 3: the follower applies 1-3 (its own snapshot is due) while it fsyncs 4-5...
    transport.handler!([message({ type: MessageType.App, index: 3, logTerm: 2, entries: [noop(4), noop(5)], commit: 3 })]);
    await until(() => storage.persisting === 1, 'the second fsync');
    // ... and meanwhile the leader's snapshot at 10 arrives.
    const data = new LockApp().snapshot();
    transport.handler!([message({
      type: MessageType.Snap, index: 10, logTerm: 2,
      snapshotMeta: { index: 10, term: 2, config: { voters: VOTERS }, crc32: crc32(data) }, snapshotOffset: 0, snapshotData: data, snapshotDone: true,
    })]);
    expect(d.core.hasPendingSnapshot()).toBe(true);
    storage.gateless = true;
    storage.openGates();
    const installed = (): boolean => !d.core.hasPendingSnapshot() && storage.loadSync().snapshot?.meta.index === 10;
    await until(() => fatal !== undefined || installed(), 'the snapshot to be installed, or the node to stop');
    return { fatal, snapshotIndex: storage.loadSync().snapshot?.meta.index ?? 0 };
  }

  it('skips its own compaction until the leader\'s snapshot is installed', async () => {
    const r = await snapshotArrivesDuringFsync();
    expect(r.fatal).toBeUndefined();
    expect(r.snapshotIndex).toBe(10);
  });

  it('(planted) compacting anyway, the follower stops', async () => {
    const r = await snapshotArrivesDuringFsync({ compactDuringPendingSnapshot: true });
    expect(r.fatal?.message).toBeDefined();
  });
});
