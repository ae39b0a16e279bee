// A snapshot sent by a peer is fully decoded and checked before storage persists it. Before, 14 junk
// bytes (with any meta) were written to disk first, then failed to decode: the node stopped and could not
// restart from its own storage.

import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { LockApp } from '../../src/node/lockApp';
import { realPorts } from '../../src/node/runtime/realPorts';
import { RaftDriver, type PeerTransport } from '../../src/node/raftDriver';
import { crc32 } from '../../src/raft/crc32';
import { makeMessage, type WireFields } from '../../src/raft/messages';
import { EntryType, MessageType, type Message, type NodeId } from '../../src/raft/types';
import { MemoryStorage } from '../../src/storage/memoryStorage';

const VOTERS = ['n1', 'n2', 'n3'];

class FakeTransport implements PeerTransport {
  handler: ((messages: Message[]) => void) | undefined;
  readonly sent: Message[] = [];
  send(messages: Message[]): void {
    this.sent.push(...messages);
  }
  onMessages(handler: (messages: Message[]) => void): void {
    this.handler = handler;
  }
  onUnreachable(_handler: (peer: NodeId) => void): void {}
  async close(): Promise<void> {}
}

function base(fields: Omit<WireFields, 'from' | 'to'>): Message {
  return makeMessage({ from: 'n1', to: 'n2', ...fields });
}

function snapMessage(data: Uint8Array, index: number, voters = VOTERS): Message {
  return base({
    type: MessageType.Snap,
    term: 2,
    index,
    logTerm: 2,
    snapshotMeta: { index, term: 2, config: { voters }, crc32: crc32(data) },
    snapshotOffset: 0,
    snapshotData: data,
    snapshotDone: true,
  });
}

const until = async (cond: () => boolean, what: string): Promise<void> => {
  const deadline = Date.now() + 5_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('hardening: a refused snapshot is never persisted', () => {
  let driver: RaftDriver<unknown> | undefined;
  afterEach(async () => {
    await driver?.stop(0);
    driver = undefined;
  });

  async function start() {
    const storage = new MemoryStorage();
    const transport = new FakeTransport();
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino({ level: 'warn' }, sink);
    const app = new LockApp();
    let fatal: Error | undefined;
    driver = (await RaftDriver.start({
      raft: { id: 'n2', voters: VOTERS, electionTicks: 1_000, heartbeatTicks: 1, random: () => 0 },
      storage,
      transport,
      app,
      tickMs: 60_000,
      snapshotEveryEntries: 1_000_000,
      logger,
      ports: realPorts(),
    })) as RaftDriver<unknown>;
    driver.on('fatal', (err: Error) => (fatal = err));
    return { storage, transport, lines, app, fatal: () => fatal, driver };
  }

  it('junk snapshot bytes (with a correct checksum) are refused and logged; the node keeps serving and restarts', async () => {
    const { storage, transport, lines, app, fatal, driver: d } = await start();
    transport.handler!([snapMessage(new TextEncoder().encode('14 junk bytes!'), 5)]);
    await until(() => lines.some((l) => l.msg === 'refused a message from a peer'), 'the warning');
    expect(String(lines.find((l) => l.msg === 'refused a message from a peer')?.reason)).toMatch(/snapshot at 5 .*application refused/);
    expect(fatal()).toBeUndefined();
    expect((await storage.load()).snapshot).toBeUndefined();
    expect(transport.sent.filter((m) => m.type === MessageType.SnapResp && m.done)).toEqual([]);

    // Still serving: the leader's append is accepted and applied.
    transport.handler!([
      base({ type: MessageType.App, term: 2, entries: [{ term: 2, index: 1, type: EntryType.Normal, data: new Uint8Array(0) }], commit: 1 }),
    ]);
    await until(() => d.core.status().applied === 1, 'the append to apply');
    // A valid snapshot is installed and persisted; a restart from this storage works.
    const good = new LockApp().snapshot();
    transport.handler!([snapMessage(good, 7)]);
    await until(() => d.core.status().snapshotIndex === 7, 'the valid snapshot');
    await until(() => transport.sent.some((m) => m.type === MessageType.SnapResp && m.done), 'the SnapResp');
    expect((await storage.load()).snapshot?.meta.index).toBe(7);
    expect(app.machine).toBeDefined();
    expect(fatal()).toBeUndefined();
  });

  it('a snapshot whose configuration lists a voter twice is refused, logged and not persisted', async () => {
    const { storage, transport, lines, fatal } = await start();
    transport.handler!([snapMessage(new LockApp().snapshot(), 5, ['n1', 'n2', 'n2'])]);
    await until(() => lines.some((l) => l.msg === 'refused a message from a peer'), 'the warning');
    expect(String(lines[0]?.reason)).toMatch(/configuration is not valid: a member is listed twice/);
    expect((await storage.load()).snapshot).toBeUndefined();
    expect(fatal()).toBeUndefined();
  });
});
