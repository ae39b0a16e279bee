// Session labels (issue 34): stored with the session, carried by the OpenSession entry (an entry without them
// keeps its bytes), kept by snapshots (format 6; a format 5 snapshot reads as sessions without labels), and
// refused beyond their limits with nothing stored.
import { describe, expect, it } from 'vitest';
import { decodeCommand, encodeCommand } from '../../src/codec/commandCodec';
import { LockStateMachine, type Command } from '../../src/state';
import { SNAPSHOT_FORMAT } from '../../src/state/snapshot';
import type { SessionLabel } from '../../src/protocol/labels';
import { Harness, expectCanonicalSnapshot, expectSameBytes, referenceSnapshot, roundTrip, sid } from './harness';
import { encodePlainSnapshot } from './snapshotOracle';

const LABELS: SessionLabel[] = [
  { key: 'host', value: 'web-1' },
  { key: 'pid', value: '4242' },
  { key: 'role', value: 'nightly backup ü' },
];

function openWith(h: Harness, n: number, labels: unknown): ReturnType<Harness['apply']> {
  return h.apply(h.req('OpenSession', { sessionId: sid(n), ttlMs: 10_000, clientName: 'backup', labels } as never));
}

describe('session labels in the state machine', () => {
  it('stores them with the session and shows them with its holds and waits', () => {
    const h = new Harness();
    expect(openWith(h, 101, LABELS).result).toMatchObject({ status: 'session_opened' });
    const plain = h.open();
    h.grant(sid(101), 'L');
    h.acquire(plain, 'L');
    expect(h.m.getSession(sid(101))?.labels).toEqual(LABELS);
    const d = h.m.describeLock('L');
    expect(d?.holder).toMatchObject({ sessionId: sid(101), clientName: 'backup', labels: LABELS });
    expect(d?.waiterSessions).toEqual([{ sessionId: plain, clientName: 'test', labels: [] }]);
    expect(h.m.sessionFacts(sid(101))).toEqual({ clientName: 'backup', labels: LABELS });
  });

  it('travels in the log entry; an entry without labels is written as before labels existed', () => {
    const base: Command = { type: 'OpenSession', clientId: 'c', requestId: 1, now: 5, sessionId: sid(101), ttlMs: 10_000, clientName: 'x' };
    const labelled: Command = { ...base, labels: LABELS };
    expect(decodeCommand(encodeCommand(labelled))).toEqual(labelled);
    expect(decodeCommand(encodeCommand(base))).toEqual(base);
    expect(encodeCommand({ ...base, labels: [] })).toEqual(encodeCommand(base));
    // A follower applying the decoded entry holds the same labels as the leader.
    const follower = new LockStateMachine();
    follower.apply(1, decodeCommand(encodeCommand(labelled)) as Command);
    expect(follower.getSession(sid(101))?.labels).toEqual(LABELS);
  });

  it('keeps them in a snapshot, in the bytes the reference encoder writes', () => {
    const h = new Harness();
    openWith(h, 101, LABELS);
    openWith(h, 102, [{ key: 'a', value: '' }]);
    h.open();
    const bytes = expectCanonicalSnapshot(h.m);
    const restored = roundTrip(h.m);
    expect(restored.getSession(sid(101))?.labels).toEqual(LABELS);
    expect(restored.getSession(sid(102))?.labels).toEqual([{ key: 'a', value: '' }]);
    expectSameBytes(restored.writeSnapshot(), bytes);
  });

  it('reads a format 5 snapshot (before labels) as sessions without labels', () => {
    const h = new Harness();
    const id = h.open();
    const old = { ...referenceSnapshot(h.m), format: 5 };
    const m = LockStateMachine.readSnapshot(encodePlainSnapshot(old));
    expect(m.getSession(id)?.labels).toEqual([]);
    expect(referenceSnapshot(m)).toEqual({ ...old, format: SNAPSHOT_FORMAT });
  });

  it('refuses a snapshot whose labels no entry could have made', () => {
    const h = new Harness();
    h.open();
    const good = referenceSnapshot(h.m);
    const withLabels = (labels: SessionLabel[]): Uint8Array =>
      encodePlainSnapshot({ ...good, sessions: good.sessions.map((s) => ({ ...s, labels })) });
    expect(() => LockStateMachine.readSnapshot(withLabels([{ key: 'b', value: '' }, { key: 'a', value: '' }]))).toThrow(/sorted/);
    expect(() => LockStateMachine.readSnapshot(withLabels([{ key: 'Host', value: '' }]))).toThrow(/label key/);
  });

  const tooMany = Array.from({ length: 17 }, (_, i) => ({ key: `k${String(i).padStart(2, '0')}`, value: 'v' }));
  const hostile: Array<[string, unknown, RegExp]> = [
    ['17 labels', tooMany, /MAX_SESSION_LABELS/],
    ['a key of 65 bytes', [{ key: 'k'.repeat(65), value: '' }], /MAX_LABEL_KEY_BYTES/],
    ['an empty key', [{ key: '', value: 'v' }], /MAX_LABEL_KEY_BYTES/],
    ['an upper-case key', [{ key: 'Host', value: 'v' }], /a-z 0-9/],
    ['a key with a space', [{ key: 'a b', value: 'v' }], /a-z 0-9/],
    ['a value of 257 bytes', [{ key: 'k', value: 'v'.repeat(257) }], /MAX_LABEL_VALUE_BYTES/],
    ['a value with a lone surrogate', [{ key: 'k', value: 'a\ud800' }], /well-formed/],
    ['a value with an escape character', [{ key: 'k', value: '\u001b[2J' }], /control characters/],
    ['1025 bytes in all', [0, 1, 2, 3, 4].map((i) => ({ key: `k${i}`, value: 'v'.repeat(203) })), /MAX_LABELS_BYTES/],
    ['keys out of order', [{ key: 'b', value: '' }, { key: 'a', value: '' }], /sorted and distinct/],
    ['a key twice', [{ key: 'a', value: '1' }, { key: 'a', value: '2' }], /sorted and distinct/],
    ['not a list', { host: 'x' }, /list/],
  ];

  it.each(hostile)('refuses %s as invalid, storing nothing', (_what, labels, why) => {
    const h = new Harness();
    const r = openWith(h, 101, labels).result;
    expect(r).toMatchObject({ status: 'invalid' });
    expect((r as { message: string }).message).toMatch(why);
    expect(h.m.getSession(sid(101))).toBeUndefined();
  });

  it('accepts labels right at every limit', () => {
    const h = new Harness();
    const atLimits = Array.from({ length: 16 }, (_, i) => ({ key: `${String(i).padStart(2, '0')}${'k'.repeat(62)}`, value: '' }));
    atLimits[0] = { key: atLimits[0]!.key, value: 'v'.repeat(1024 - 16 * 64) };
    expect(openWith(h, 101, atLimits).result).toMatchObject({ status: 'session_opened' });
    expect(h.m.getSession(sid(101))?.labels).toHaveLength(16);
  });
});
