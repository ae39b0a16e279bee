// Every result status, joined from its one definition: the shared statuses (results.ts) and the statuses a
// registry entry declares as its own (`results` in registry/*.ts). The Result union and the stored codecs
// (resultCodec.ts) are both read off this join, so a new command with a new status edits neither file.
import { ENTRY_STATUS_TABLES, type EntryStatusTables } from './registry/index';
import { SHARED_STATUSES, type LockEvent, type ResultsOf, type StatusCodec, type StatusTable } from './results';

/** Every result a command may yield and the retry table may store. */
export type Result = ResultsOf<typeof SHARED_STATUSES> | ResultsOf<EntryStatusTables[number]>;

export type ResultStatus = Result['status'];

/** The results of one status, or of each of a union of them. */
export type ResultWith<S extends ResultStatus> = Extract<Result, { status: S }>;

type MemberNumbers<T extends StatusTable> = T[keyof T]['no'];

/** The names and StoredResult member numbers that two tables share (walked in order, each against those before). */
type Clashes<T extends readonly StatusTable[], Names = never, Numbers = never> = T extends readonly [infer H extends StatusTable, ...infer Rest extends readonly StatusTable[]]
  ? (keyof H & Names) | `member ${MemberNumbers<H> & Numbers}` | Clashes<Rest, Names | keyof H, Numbers | MemberNumbers<H>>
  : never;

/** Fails to compile, naming the clash, when two tables declare one status name or one member number. */
type NoClash<T extends never> = T;
export type StatusClashes = NoClash<Clashes<[typeof SHARED_STATUSES, ...EntryStatusTables]>>;

/** The tables joined, in member-number order; a clash the types let through (a widened table) throws here. */
export function joinStatusTables(tables: readonly StatusTable[]): Readonly<Record<string, StatusCodec>> {
  const byNumber = new Map<number, [string, StatusCodec]>();
  const names = new Set<string>();
  for (const [status, c] of tables.flatMap((t) => Object.entries(t))) {
    if (names.has(status) || byNumber.has(c.no)) throw new Error(`result status ${status} (StoredResult member ${c.no}) is declared twice`);
    names.add(status);
    byNumber.set(c.no, [status, c]);
  }
  return Object.freeze(Object.fromEntries([...byNumber.entries()].sort(([a], [b]) => a - b).map(([, e]) => e)));
}

/** Every status's codec, keyed by status (resultCodec.ts reads them). */
export const RESULT_CODECS = joinStatusTables([SHARED_STATUSES, ...ENTRY_STATUS_TABLES]) as { readonly [S in ResultStatus]: StatusCodec };

/**
 * The outcome of apply(). `duplicate` is true when (clientId, requestId) had been applied before: `result`
 * is then the stored result of that first application and `events` is empty (nothing happened now). Note
 * for a duplicate `waiting`: the grant may have happened since; ask sessionLockState().
 */
export interface CommandResult {
  result: Result;
  events: LockEvent[];
  duplicate: boolean;
}
