import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { FATAL_EXIT_CODE, runUntilStopped } from '../../src/node/serve';

function capture(): { logger: pino.Logger; lines: () => Array<Record<string, unknown>> } {
  const out: string[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (out.push(String(chunk)), done()) });
  return { logger: pino({ level: 'info' }, sink), lines: () => out.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) };
}

interface FakeNode {
  driver: EventEmitter;
  removedBy?: (by: string) => void;
  onRemovedByMember(handler: (by: string) => void): void;
  stop(): Promise<void>;
  stopped: number;
}

function fakeNode(): FakeNode {
  const node: FakeNode = {
    driver: new EventEmitter(),
    stopped: 0,
    onRemovedByMember: (handler) => void (node.removedBy = handler),
    stop: async () => void node.stopped++,
  };
  return node;
}

describe('node exit status', () => {
  it('regression: a fatal stop exits non-zero, with the reason as the last log line', async () => {
    const node = fakeNode();
    const { logger, lines } = capture();
    const done = runUntilStopped(node, logger, new EventEmitter());
    node.driver.emit('fatal', new Error('fsync failed: EIO'));
    expect(await done).toBe(FATAL_EXIT_CODE);
    expect(FATAL_EXIT_CODE).not.toBe(0);
    expect(node.stopped).toBe(1);
    const last = lines().at(-1)!;
    expect(last.msg).toBe('stopped after a fatal error');
    expect(last.err).toBe('fsync failed: EIO');
  });

  it('SIGTERM stops the node gracefully and exits 0', async () => {
    const node = fakeNode();
    const signals = new EventEmitter();
    const done = runUntilStopped(node, capture().logger, signals);
    signals.emit('SIGTERM');
    expect(await done).toBe(0);
    expect(node.stopped).toBe(1);
  });

  it('a member saying this node was removed stops it gracefully, exit 0, naming the member', async () => {
    const node = fakeNode();
    const { logger, lines } = capture();
    const done = runUntilStopped(node, logger, new EventEmitter());
    node.removedBy!('n2');
    expect(await done).toBe(0);
    expect(node.stopped).toBe(1);
    expect(lines().find((l) => l.by === 'n2')?.msg).toMatch(/member n2 says this node was removed/);
  });
});
