// ReadIndex contexts are random (128 bits per read), not a decimal counter a peer could predict.

import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { LockApp } from '../../src/node/lockApp';
import { RaftDriver, type PeerTransport } from '../../src/node/raftDriver';
import { realPorts } from '../../src/node/runtime/realPorts';
import { Role, type Message, type NodeId } from '../../src/raft/types';
import { MemoryStorage } from '../../src/storage/memoryStorage';
import { mulberry32 } from '../support/prng';

class NoTransport implements PeerTransport {
  send(_messages: Message[]): void {}
  onMessages(_handler: (messages: Message[]) => void): void {}
  onUnreachable(_handler: (peer: NodeId) => void): void {}
  async close(): Promise<void> {}
}

describe('hardening: read contexts', () => {
  let driver: RaftDriver<unknown> | undefined;
  afterEach(async () => {
    await driver?.stop(0);
    driver = undefined;
  });

  async function leader(randomBytes?: (n: number) => Uint8Array): Promise<{ d: RaftDriver<unknown>; contexts: Uint8Array[] }> {
    const d = (await RaftDriver.start({
      raft: { id: 'n1', voters: ['n1'], electionTicks: 2, heartbeatTicks: 1, random: () => 0 },
      storage: new MemoryStorage(),
      transport: new NoTransport(),
      app: new LockApp(),
      tickMs: 2,
      snapshotEveryEntries: 1_000_000,
      logger: pino({ level: 'silent' }),
      ports: randomBytes ? { ...realPorts(), random: { fraction: () => 0, bytes: randomBytes } } : realPorts(),
    })) as RaftDriver<unknown>;
    driver = d;
    const deadline = Date.now() + 5_000;
    while (d.currentRole() !== Role.Leader || d.core.status().commit < 1) {
      if (Date.now() > deadline) throw new Error('no leader');
      await new Promise((r) => setTimeout(r, 5));
    }
    const contexts: Uint8Array[] = [];
    const readIndex = d.core.readIndex.bind(d.core);
    d.core.readIndex = (ctx: Uint8Array) => {
      contexts.push(ctx);
      readIndex(ctx);
    };
    return { d, contexts };
  }

  it('are 128 random bits each: distinct, not sequential, not decimal text', async () => {
    const { d, contexts } = await leader();
    await Promise.all(Array.from({ length: 20 }, () => d.linearizableRead()));
    expect(contexts).toHaveLength(20);
    expect(contexts.every((c) => c.byteLength === 16)).toBe(true);
    const hex = contexts.map((c) => Buffer.from(c).toString('hex'));
    expect(new Set(hex).size).toBe(20);
    // The old contexts were the ASCII decimal strings "1", "2", ...
    expect(contexts.some((c) => /^[0-9]+$/.test(Buffer.from(c).toString('latin1')))).toBe(false);
  });

  it('come from the injected source (so a deterministic caller can seed it)', async () => {
    const rand = mulberry32(7);
    const source = (n: number): Uint8Array => Uint8Array.from({ length: n }, () => Math.floor(rand() * 256));
    const expected = mulberry32(7);
    const { d, contexts } = await leader(source);
    await d.linearizableRead();
    await d.linearizableRead();
    const want = (): Uint8Array => Uint8Array.from({ length: 16 }, () => Math.floor(expected() * 256));
    expect(contexts).toEqual([want(), want()]);
  });
});
