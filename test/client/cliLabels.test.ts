// How the CLI prints a session's client name and labels (issue 34): `watch` lines, `describe` waiters, and
// label values that would otherwise be ambiguous on one line.
import { describe, expect, it } from 'vitest';
import { clientOf, descriptionJson, eventJson, formatDescription, formatEvent, formatLabels } from '../../src/cli/output';
import type { LockDescription, SessionDetails } from '../../src/client';

const worker: SessionDetails = { handle: 'a1b2c3d4e5f60718', clientName: 'billing', labels: { pid: '12', host: 'web-1' } };

describe('labels in CLI output', () => {
  it('prints labels in key order, quoting a value with a space, quote or =', () => {
    expect(formatLabels({ z: '1', a: 'x y', m: 'k=v', q: 'say "hi"', e: '' })).toBe('a="x y" e= m="k=v" q="say \\"hi\\"" z=1');
    expect(clientOf(worker)).toBe('"billing" host=web-1 pid=12');
    expect(clientOf({ clientName: '', labels: {} })).toBe('-');
  });

  it('a GRANTED watch line names the new holder; other kinds do not', () => {
    const granted = { kind: 'GRANTED' as const, lock: 'L', sessionId: worker.handle, token: 5n, index: 5n, holder: worker };
    expect(formatEvent(granted)).toBe(`GRANTED  lock=L session=${worker.handle} token=5 index=5 client="billing" host=web-1 pid=12\n`);
    expect(formatEvent({ ...granted, kind: 'RELEASED', holder: null })).toBe(`RELEASED lock=L session=${worker.handle} token=5 index=5\n`);
    expect(eventJson(granted)).toMatchObject({ holder: worker });
    expect(eventJson({ ...granted, holder: null })).not.toHaveProperty('holder');
  });

  it('describe lists the first 10 waiters with their labels and counts the rest', () => {
    const waiters = Array.from({ length: 12 }, (_, i): SessionDetails => ({ handle: `${i}`.padStart(16, '0'), clientName: `w${i}`, labels: { i: `${i}` } }));
    const d: LockDescription = {
      lock: 'L',
      held: true,
      holderSession: worker.handle,
      holder: worker,
      token: 3n,
      grantedAtMs: 0,
      waiters: waiters.map((w) => w.handle),
      waiterSessions: waiters,
      latestToken: 3n,
      lockDelayMs: 0,
      delayedUntilMs: 0,
      delayRemainingMs: 0,
      sharedHolders: [],
      waiterShared: [],
    };
    const text = formatDescription(d);
    expect(text).toMatch(/holder client: +"billing" host=web-1 pid=12\n/);
    expect(text).toMatch(/waiter 10: +0{15}9 "w9" i=9\n/);
    expect(text).not.toMatch(/waiter 11/);
    expect(text).toMatch(/\.\.\. 2 more \(--json lists them all\)/);
    expect(descriptionJson(d)).toMatchObject({ holder: worker, waiterSessions: waiters });
  });
});
