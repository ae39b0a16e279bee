// A node encodes its snapshot a slice at a time between turns of its Ready loop: entries keep committing
// and applying while a snapshot is encoded, and the snapshot compacted into the log is the state at its
// capture, not the state when the encoding ended.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeCommand } from '../../src/codec/commandCodec';
import { LockApp } from '../../src/node/lockApp';
import { RaftDriver, type PeerTransport } from '../../src/node/raftDriver';
import type { SnapshotJob } from '../../src/node/replicatedApp';
import { realPorts } from '../../src/node/runtime/realPorts';
import { Role, type Message, type NodeId } from '../../src/raft/types';
import { LockStateMachine, type CommandResult } from '../../src/state';
import { MemoryStorage } from '../../src/storage/memoryStorage';

class NoPeers implements PeerTransport {
  send(): void {}
  onMessages(_handler: (messages: Message[]) => void): void {}
  onUnreachable(_handler: (peer: NodeId) => void): void {}
  async close(): Promise<void> {}
}

/** LockApp (one record per slice) that counts the slices of each capture and the applies during them. */
class WatchedApp extends LockApp {
  captures: Array<{ index: number; slices: number; appliedDuring: number; done: boolean }> = [];

  constructor() {
    super(1);
  }

  override captureSnapshot(): SnapshotJob {
    const job = super.captureSnapshot();
    const capture = { index: this.machine.lastApplied, slices: 0, appliedDuring: 0, done: false };
    this.captures.push(capture);
    this.on('applied', () => {
      if (!capture.done) capture.appliedDuring++;
    });
    return {
      step: () => {
        capture.slices++;
        capture.done = job.step();
        return capture.done;
      },
      bytes: () => job.bytes(),
      cancel: () => job.cancel(),
    };
  }
}

const openSession = (n: number): Uint8Array =>
  encodeCommand({ type: 'OpenSession', clientId: '', requestId: 0, now: n, sessionId: n.toString(16).padStart(32, '0'), ttlMs: 10_000, clientName: '' });

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('snapshots encoded in slices', () => {
  let driver: RaftDriver<CommandResult> | undefined;
  afterEach(async () => {
    await driver?.stop(0);
    driver = undefined;
  });

  it('apply entries meanwhile, and compact the log with the state at the capture', async () => {
    const app = new WatchedApp();
    const storage = new MemoryStorage();
    driver = await RaftDriver.start<CommandResult>({
      raft: { id: 'n1', voters: ['n1'], electionTicks: 2, heartbeatTicks: 1, random: () => 0 },
      storage,
      transport: new NoPeers(),
      app,
      tickMs: 5,
      snapshotEveryEntries: 200,
      logger: pino({ level: 'silent' }),
      ports: realPorts(),
    });
    const d = driver;
    await until(() => d.currentRole() === Role.Leader, 'leadership');
    // 200 sessions make a capture due; its encoding then takes 200 turns or more (one record per slice).
    await Promise.all(Array.from({ length: 200 }, (_, i) => d.propose(openSession(i + 1))));
    await until(() => app.captures.length === 1, 'a capture');
    const capture = app.captures[0]!;
    // While it is being encoded, proposals commit and apply.
    for (let i = 201; i <= 210; i++) await d.propose(openSession(i));
    expect(capture.done).toBe(false);
    expect(capture.appliedDuring).toBe(10);
    await until(() => capture.done && storage.loadSync().snapshot !== undefined, 'the compaction');
    expect(capture.slices).toBeGreaterThan(200);
    // The stored snapshot is the state at the capture: the sessions opened later are not in it.
    const stored = storage.loadSync().snapshot!;
    const restored = LockStateMachine.readSnapshot(stored.data);
    expect(restored.lastApplied).toBe(capture.index);
    expect(restored.stats().sessions).toBe(200);
    expect(app.machine.stats().sessions).toBe(210);
    expect(stored.meta.index).toBeGreaterThanOrEqual(capture.index);
    expect(stored.meta.index).toBeLessThan(capture.index + 10);
  });
});
