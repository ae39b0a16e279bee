// listLocks: the locks under a prefix in name order, a page at a time, with each waiter's queueing time
// (the `now` of its Acquire entry, kept through a snapshot).
import { describe, expect, it } from 'vitest';
import { LockStateMachine, MAX_LIST_LIMIT, type LockListOptions } from '../../src/state';
import { Harness } from './harness';

const all = (o: Partial<LockListOptions> = {}): LockListOptions => ({ limit: 100, includeIdle: false, maxWaiters: 100, visible: () => true, ...o });

describe('listLocks', () => {
  it('lists held and awaited locks with the holder, its grant time and the FIFO queue with queueing times', () => {
    const h = new Harness();
    const [a, b, c] = [h.open(), h.open(), h.open()];
    const token = h.grant(a, 'app/x');
    const grantedAt = h.now;
    h.acquire(b, 'app/x');
    const bSince = h.now;
    h.acquire(c, 'app/x');
    const cSince = h.now;
    expect(bSince).toBeLessThan(cSince);
    expect(h.m.listLocks('app/', all())).toEqual([
      {
        name: 'app/x',
        holder: { sessionId: a, token, grantedAt },
        latestToken: token,
        waiters: [
          { sessionId: b, since: bSince },
          { sessionId: c, since: cSince },
        ],
        waiterCount: 2,
      },
    ]);
    // The queueing times survive a snapshot.
    const restored = LockStateMachine.readSnapshot(h.m.writeSnapshot());
    expect(restored.listLocks('app/', all())).toEqual(h.m.listLocks('app/', all()));
  });

  it('pages by name after start_after, only under the prefix, and leaves out what `visible` refuses', () => {
    const h = new Harness();
    const s = h.open();
    for (const name of ['a/1', 'a/2', 'a/3', 'a0', 'b/1', 'a/secret']) h.grant(s, name);
    const names = (o: Partial<LockListOptions>, prefix = 'a/'): string[] => h.m.listLocks(prefix, all(o)).map((l) => l.name);
    expect(names({})).toEqual(['a/1', 'a/2', 'a/3', 'a/secret']);
    expect(names({ limit: 2 })).toEqual(['a/1', 'a/2']);
    expect(names({ limit: 2, startAfter: 'a/2' })).toEqual(['a/3', 'a/secret']);
    // A start_after before the prefix starts at the prefix; one past it ends the list.
    expect(names({ startAfter: '' })).toEqual(['a/1', 'a/2', 'a/3', 'a/secret']);
    expect(names({ startAfter: 'a0' })).toEqual([]);
    // Hidden locks neither appear nor use up the page.
    expect(names({ limit: 2, visible: (n) => n !== 'a/1' && n !== 'a/2' })).toEqual(['a/3', 'a/secret']);
    expect(names({}, '')).toEqual(['a/1', 'a/2', 'a/3', 'a/secret', 'a0', 'b/1']);
    expect(names({ limit: 10 * MAX_LIST_LIMIT }, '')).toHaveLength(6);
  });

  it('shows idle locks (kept for their keys) only with includeIdle, and at most maxWaiters waiters', () => {
    const h = new Harness();
    const [a, b, c] = [h.open(), h.open(), h.open()];
    const token = h.grant(a, 'k');
    expect(h.write(a, 'k', token, [{ type: 'put', key: 'key', value: Buffer.from('v') }]).result).toMatchObject({ status: 'written' });
    h.release(a, 'k', token);
    h.grant(a, 'q');
    h.acquire(b, 'q');
    h.acquire(c, 'q');
    expect(h.m.listLocks('', all()).map((l) => l.name)).toEqual(['q']);
    expect(h.m.listLocks('', all({ includeIdle: true })).map((l) => [l.name, l.holder, l.latestToken])).toEqual([
      ['k', null, token],
      ['q', expect.anything(), expect.any(Number)],
    ]);
    const [q] = h.m.listLocks('q', all({ maxWaiters: 1 }));
    expect([q?.waiters.map((w) => w.sessionId), q?.waiterCount]).toEqual([[b], 2]);
  });
});
