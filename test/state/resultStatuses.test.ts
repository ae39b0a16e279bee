// The join of the result status tables (src/state/resultStatuses.ts): the shared statuses and those each
// registry entry declares as its own make one table, ordered by StoredResult member, with no name or number
// twice; and an entry's own status is answered by that entry alone.
import { describe, expect, it } from 'vitest';
import { COMMAND_TYPES, RESULT_CODECS, SHARED_STATUSES, entryOf, joinStatusTables, uint } from '../../src/state';

describe('result status tables', () => {
  it('joins the shared statuses and every entry\'s own, in member-number order', () => {
    const own = COMMAND_TYPES.flatMap((t) => Object.keys(entryOf(t).results ?? {}));
    // The statuses that moved out of results.ts into their one command's entry (a new command adds its own).
    expect(own).toEqual(expect.arrayContaining(['checkpointed', 'session_opened', 'sessions_expired', 'written']));
    for (const status of own) expect(SHARED_STATUSES, status).not.toHaveProperty(status);
    expect(Object.keys(RESULT_CODECS).sort()).toEqual([...Object.keys(SHARED_STATUSES), ...own].sort());
    const numbers = Object.values(RESULT_CODECS).map((c) => c.no);
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
  });

  it('gives an entry\'s own status to that entry alone, among the statuses it answers', () => {
    for (const t of COMMAND_TYPES) {
      for (const status of Object.keys(entryOf(t).results ?? {})) {
        expect(entryOf(t).statuses, `${t} answers ${status}`).toContain(status);
        const others = COMMAND_TYPES.filter((o) => o !== t && (entryOf(o).statuses as readonly string[]).includes(status));
        expect(others, status).toEqual([]);
      }
    }
  });

  it('refuses a status name or a member number declared twice (what the types catch, when a table is widened)', () => {
    const a = { ok: { no: 1, fields: [uint(1, 'n')] } };
    expect(Object.keys(joinStatusTables([{ later: { no: 2, fields: [] } }, a]))).toEqual(['ok', 'later']);
    expect(() => joinStatusTables([a, { ok: { no: 2, fields: [] } }])).toThrow(/result status ok \(StoredResult member 2\) is declared twice/);
    expect(() => joinStatusTables([a, { other: { no: 1, fields: [] } }])).toThrow(/result status other \(StoredResult member 1\) is declared twice/);
  });
});
