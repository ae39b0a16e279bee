// Defensive validation: a log entry can carry anything; applying it must never throw and never change state.
import { describe, expect, it } from 'vitest';
import {
  LockStateMachine,
  MAX_CLIENT_ID_BYTES,
  MAX_KEY_BYTES,
  MAX_LOCK_NAME_BYTES,
  MAX_OPS_PER_WRITE,
  MAX_SESSION_TTL_MS,
  MAX_VALUE_BYTES,
  MAX_WRITE_BYTES,
  MIN_SESSION_TTL_MS,
  validateCommand,
  type Command,
} from '../../src/state';
import { Harness, put, referenceSnapshot, sid } from './harness';

function setup() {
  const h = new Harness();
  h.nextSession = 0xabc;
  const a = h.open();
  const t = h.grant(a, 'L');
  h.write(a, 'L', t, [put('k', 'v')]);
  return { h, a, t };
}

/** State without the parts every apply changes (lastApplied) or every request may change (dedup). */
function core(m: LockStateMachine) {
  const s = referenceSnapshot(m);
  return { ...s, lastApplied: 0, dedup: [] };
}

const meta = { clientId: 'c', requestId: 1, now: 5 };

describe('invalid commands', () => {
  it('are answered with `invalid`, change nothing and never throw', () => {
    const { h, a, t } = setup();
    const okWrite = { type: 'Write', ...meta, lock: 'L', sessionId: a, token: t, ops: [put('k', 'v2')] };
    const bad: unknown[] = [
      null,
      undefined,
      42,
      'Acquire',
      [],
      {},
      { type: 'Bogus' },
      { type: 'toString' },
      { type: 'Acquire' },
      { type: 'Acquire', ...meta, lock: 'L', sessionId: a }, // tryOnly missing
      { type: 'Acquire', ...meta, lock: 'L', sessionId: a.toUpperCase(), tryOnly: false },
      { type: 'Acquire', ...meta, lock: 'L', sessionId: a, tryOnly: false, waitTimeoutMs: -1 },
      { type: 'Acquire', ...meta, lock: 'x'.repeat(MAX_LOCK_NAME_BYTES + 1), sessionId: a, tryOnly: false },
      { type: 'Acquire', ...meta, lock: 'é'.repeat(MAX_LOCK_NAME_BYTES / 2 + 1), sessionId: a, tryOnly: false },
      { type: 'Acquire', ...meta, lock: '\ud800', sessionId: a, tryOnly: false },
      { type: 'Acquire', ...meta, lock: 7, sessionId: a, tryOnly: false },
      { type: 'Acquire', ...meta, now: -1, lock: 'L', sessionId: a, tryOnly: false },
      { type: 'Acquire', ...meta, now: Number.NaN, lock: 'L', sessionId: a, tryOnly: false },
      { type: 'Acquire', ...meta, requestId: 1.5, lock: 'L', sessionId: a, tryOnly: false },
      { type: 'Acquire', ...meta, requestId: 0, lock: 'L', sessionId: a, tryOnly: false },
      { type: 'Acquire', ...meta, clientId: 'c'.repeat(MAX_CLIENT_ID_BYTES + 1), lock: 'L', sessionId: a, tryOnly: false },
      { type: 'OpenSession', ...meta, sessionId: sid(5), ttlMs: MIN_SESSION_TTL_MS - 1, clientName: '' },
      { type: 'OpenSession', ...meta, sessionId: sid(5), ttlMs: MAX_SESSION_TTL_MS + 1, clientName: '' },
      { type: 'OpenSession', ...meta, sessionId: 'abc', ttlMs: 5_000, clientName: '' },
      { type: 'OpenSession', ...meta, sessionId: sid(5), ttlMs: 5_000 },
      { type: 'Release', ...meta, lock: 'L', sessionId: a, token: 0 },
      { type: 'Release', ...meta, lock: 'L', sessionId: a, token: '5' },
      { type: 'Release', ...meta, lock: 'L', sessionId: a, token: 2 ** 53 },
      { ...okWrite, token: -3 },
      { ...okWrite, ops: [] },
      { ...okWrite, ops: 'put' },
      { ...okWrite, ops: [null] },
      { ...okWrite, ops: [{ type: 'put', key: 'k' }] },
      { ...okWrite, ops: [{ type: 'put', key: 'k', value: [1, 2] }] },
      { ...okWrite, ops: [{ type: 'merge', key: 'k' }] },
      { ...okWrite, ops: [{ type: 'delete', key: '' }] },
      { ...okWrite, ops: [{ type: 'delete', key: 'k'.repeat(MAX_KEY_BYTES + 1) }] },
      { ...okWrite, ops: [{ type: 'put', key: 'k', value: new Uint8Array(MAX_VALUE_BYTES + 1) }] },
      { ...okWrite, ops: Array.from({ length: MAX_OPS_PER_WRITE + 1 }, (_, i) => put(`k${i}`, 'v')) },
      {
        ...okWrite,
        ops: Array.from({ length: Math.ceil(MAX_WRITE_BYTES / MAX_VALUE_BYTES) + 1 }, (_, i) => ({
          type: 'put',
          key: `k${i}`,
          value: new Uint8Array(MAX_VALUE_BYTES),
        })),
      },
      { ...okWrite, ackedBelow: 100_000 },
      { type: 'ExpireSession', now: 1, sessionId: 'nope' },
      { type: 'ExpireSession', sessionId: a },
      { type: 'CloseSession', ...meta, sessionId: null },
    ];
    const before = core(h.m);
    for (const [i, raw] of bad.entries()) {
      // distinct request ids, or a case would be answered as a retry of the one before
      const c = raw !== null && typeof raw === 'object' && 'requestId' in raw && raw.requestId === 1 ? { ...raw, requestId: 100 + i } : raw;
      const out = h.apply(c as Command);
      expect(out.result.status, `case ${i}: ${JSON.stringify(c)?.slice(0, 80)}`).toBe('invalid');
      expect(out.events).toEqual([]);
      expect(validateCommand(c), `case ${i}`).toEqual(expect.any(String));
    }
    expect(core(h.m)).toEqual(before);
    expect(h.value('k')).toBe('v');
  });

  it('accepts values exactly at the limits', () => {
    const h = new Harness();
    const a = h.open(MAX_SESSION_TTL_MS, 'n'.repeat(128));
    h.open(MIN_SESSION_TTL_MS);
    const lock = '\u{1F512}'.repeat(MAX_LOCK_NAME_BYTES / 4);
    const t = h.grant(a, lock);
    const key = 'é'.repeat(MAX_KEY_BYTES / 2);
    const big = { type: 'put' as const, key, value: new Uint8Array(MAX_VALUE_BYTES) };
    expect(h.write(a, lock, t, [big]).result).toEqual({ status: 'written', token: t, ops: 1, index: h.index });
    const many = Array.from({ length: MAX_OPS_PER_WRITE }, (_, i) => put(`k${i}`, 'v'));
    expect(h.write(a, lock, t, many).result).toMatchObject({ status: 'written', ops: MAX_OPS_PER_WRITE });
    expect(h.m.get(key)?.value?.length).toBe(MAX_VALUE_BYTES);
  });

  it('survives random garbage (seeded)', () => {
    const m = new LockStateMachine();
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const atoms: unknown[] = [null, undefined, 0, -1, 1.5, 2 ** 60, NaN, '', 'L', sid(1), true, [], {}, new Uint8Array(2), 'Acquire', 'Write'];
    const fields = ['type', 'clientId', 'requestId', 'now', 'sessionId', 'lock', 'token', 'ops', 'tryOnly', 'ttlMs', 'clientName', 'ackedBelow'];
    const types = ['OpenSession', 'CloseSession', 'ExpireSession', 'Acquire', 'CancelWait', 'Release', 'Write', 'Noop'];
    for (let i = 1; i <= 3_000; i++) {
      const c: Record<string, unknown> = { type: types[Math.floor(rnd() * types.length)] };
      for (const f of fields) if (rnd() < 0.6) c[f] = atoms[Math.floor(rnd() * atoms.length)];
      if (rnd() < 0.3) c.ops = [{ type: rnd() < 0.5 ? 'put' : 'delete', key: atoms[Math.floor(rnd() * atoms.length)], value: new Uint8Array(1) }];
      expect(() => m.apply(i, c as unknown as Command)).not.toThrow();
    }
    expect(m.checkInvariants()).toEqual([]);
  });
});
