// Snapshots written by older code (test/state/fixtures/README.md) install with today's code: the machine
// they restore is observably the one that code had (sessions, leases, locks, keys, auth tables, the retry
// table, and the answer a retry of every request gets), it writes itself in today's format, and that
// round-trips. Format 4 stored results as dictionary fields or JSON; today's format stores them as protobuf.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LockStateMachine, SNAPSHOT_FORMAT, type Result } from '../../src/state';
import { expectCanonicalSnapshot, expectSameBytes, referenceSnapshot, withoutWaitTimes } from './harness';
import { encodePlainSnapshot } from './snapshotOracle';
import { fixtureStates, observe } from './fixtureStates';

const DIR = path.join(__dirname, 'fixtures');

/** Every status a request's stored answer can have (sessions_expired and checkpointed are never stored). */
const STORED_KINDS = [
  'session_opened',
  'session_ended closed',
  'session_ended expired',
  'session_ended revoked',
  'granted new',
  'granted again',
  'waiting',
  'held',
  'cancelled',
  'not_waiting',
  'released',
  'released handover',
  'written',
  'written indexed',
  'auth_changed',
  'auth_changed token',
  'keys_moved',
  'refused',
  'refused key',
  'refused key owner',
  'refused subject',
  'invalid',
];

function kindOf(r: Result): string {
  switch (r.status) {
    case 'session_ended':
      return `${r.status} ${r.cause}`;
    case 'granted':
      return `${r.status} ${r.newGrant ? 'new' : 'again'}`;
    case 'released':
      return r.nextHolder === undefined ? r.status : `${r.status} handover`;
    case 'written':
      return r.index === undefined ? r.status : `${r.status} indexed`;
    case 'auth_changed':
      return r.tokenId === undefined ? r.status : `${r.status} token`;
    case 'refused':
      return [r.status, ...(r.key === undefined ? [] : ['key']), ...(r.owner === undefined ? [] : ['owner']), ...(r.subject === undefined ? [] : ['subject'])].join(' ');
    default:
      return r.status;
  }
}

/**
 * An observation with its locks in name order: a live machine iterates its lock records in creation order,
 * a restored one in name order (describeLock, which the observation is made of, is by name either way).
 */
function byLockName(o: unknown): unknown {
  const x = o as { locks: Array<{ name: string }> };
  return { ...x, locks: [...x.locks].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) };
}

describe('snapshots written by older code', () => {
  const states = fixtureStates();

  it('are format 4 and hold every kind of stored result', () => {
    const kinds = new Set<string>();
    for (const { name } of states) {
      const bytes = fs.readFileSync(path.join(DIR, `${name}.snap`));
      expect(bytes[4], name).toBe(4); // after the magic: the format
      const observed = JSON.parse(fs.readFileSync(path.join(DIR, `${name}.observed.json`), 'utf8')) as { retries: Array<Result | null> };
      for (const r of observed.retries) if (r !== null) kinds.add(kindOf(r));
    }
    expect([...kinds].sort()).toEqual([...STORED_KINDS].sort());
  });

  for (const { name, machine, requests } of states) {
    it(`${name}: installs as the machine that code observed, and retries get their stored answers`, () => {
      const bytes = new Uint8Array(fs.readFileSync(path.join(DIR, `${name}.snap`)));
      const observed: unknown = JSON.parse(fs.readFileSync(path.join(DIR, `${name}.observed.json`), 'utf8'));
      const m = LockStateMachine.readSnapshot(bytes);
      expect(byLockName(observe(m, requests))).toEqual(byLockName(observed));
      // Written in today's format, as the oracle writes it; the same bytes as the state rebuilt today, but
      // for the wait times format 4 did not keep.
      const converted = expectCanonicalSnapshot(m);
      expect(converted[4]).toBe(SNAPSHOT_FORMAT);
      expectSameBytes(converted, encodePlainSnapshot(withoutWaitTimes(referenceSnapshot(machine))));
      const again = LockStateMachine.readSnapshot(converted);
      expectSameBytes(again.writeSnapshot(), converted);
      expect(byLockName(observe(again, requests))).toEqual(byLockName(observed));
      // A retry applied (not only looked up) is answered from the table, changing nothing.
      const stored = (observed as { retries: Array<Result | null> }).retries;
      let index = m.lastApplied;
      requests.forEach((command, i) => {
        const answer = stored[i];
        if (answer === null || answer === undefined) return;
        expect(again.apply(++index, command), `request ${i}`).toEqual({ result: answer, events: [], duplicate: true });
      });
      expect(again.checkInvariants()).toEqual([]);
    });
  }
});
