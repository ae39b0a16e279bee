// The command registry (issue 31): one entry per replicated command, each in its own file, holding its type,
// its state.proto oneof member and body codec, its validation, its permission rule at apply, its execution
// and the results it may yield. The codec (src/codec/commandCodec.ts), the state machine's dispatch and the
// node's typed propose all read this table; adding a command is a new entry file listed here, its proto
// message, and (if clients send it) its RPC.
import type { InvalidResult, RefusedResult, ResultIn, SharedStatus, StatusTable } from '../results';
import { acquire } from './acquire';
import { acquireAll } from './acquireAll';
import { authChange } from './authChange';
import { cancelWait } from './cancelWait';
import { checkpointLeases } from './checkpointLeases';
import { closeSession } from './closeSession';
import { endLockDelays } from './endLockDelays';
import type { BodyReader, CommandEntry, MetaOf, RequestMeta } from './entry';
import { expireSession } from './expireSession';
import { moveKeys } from './moveKeys';
import { openSession } from './openSession';
import { release } from './release';
import { revokeLock } from './revokeLock';
import { revokeSession } from './revokeSession';
import { semaphoreAcquire } from './semaphoreAcquire';
import { semaphoreCancelWait } from './semaphoreCancelWait';
import { semaphoreRelease } from './semaphoreRelease';
import { write } from './write';

/** Every entry, in the order of COMMAND_TYPES (kept from before the registry). */
const ENTRIES = [
  openSession,
  closeSession,
  expireSession,
  checkpointLeases,
  acquire,
  cancelWait,
  release,
  write,
  authChange,
  moveKeys,
  revokeSession,
  revokeLock,
  endLockDelays,
  semaphoreAcquire,
  semaphoreRelease,
  semaphoreCancelWait,
  acquireAll,
] as const;

type AnyEntry = (typeof ENTRIES)[number];
type CommandOf<E> = E extends CommandEntry<infer C, infer _S, infer _R> ? C : never;
type StatusOf<E> = E extends CommandEntry<infer _C, infer S, infer _R> ? S : never;
type OwnStatusesOf<E> = E extends CommandEntry<infer _C, infer _S, infer R> ? R : never;

/** Every replicated command. */
export type Command = CommandOf<AnyEntry>;
export type CommandType = Command['type'];

/** The entry of one command type, with its own types. */
export type EntryOf<T extends CommandType> = CommandEntry<Extract<Command, { type: T }>, StatusOf<Extract<AnyEntry, { type: T }>>, Extract<Joined<OwnStatusesOf<Extract<AnyEntry, { type: T }>>>, StatusTable>>;

/** The tables of a union of entries as one (each a table of its own statuses: their names never clash). */
type Joined<U> = (U extends unknown ? (table: U) => void : never) extends (table: infer I) => void ? I : never;

/**
 * What applying a command of type `T` may answer: its own results, a refusal (dedup, permission, its own
 * rules), or `invalid`. A retry answers the stored result of the same request, so of the same type.
 */
export type ResultOf<T extends CommandType> = ResultIn<StatusOf<Extract<AnyEntry, { type: T }>>, OwnStatusesOf<Extract<AnyEntry, { type: T }>>> | RefusedResult | InvalidResult;

/** Fails to compile, naming it, when an entry answers a status that is neither shared nor its own. */
type Declared<T extends never> = T;
type Undeclared<E> = E extends unknown ? Exclude<StatusOf<E>, SharedStatus | keyof OwnStatusesOf<E>> : never;
export type UndeclaredStatuses = Declared<Undeclared<AnyEntry>>;

/** The own status table of every entry, in the registry's order (resultStatuses.ts joins them). */
export type EntryStatusTables = TablesOf<typeof ENTRIES>;
type TablesOf<T extends readonly unknown[]> = { -readonly [K in keyof T]: OwnStatusesOf<T[K]> };
export const ENTRY_STATUS_TABLES: readonly StatusTable[] = ENTRIES.map((e) => (e as { results?: StatusTable }).results ?? {});

const BY_TYPE: ReadonlyMap<string, EntryOf<CommandType>> = new Map(ENTRIES.map((e) => [e.type, e as unknown as EntryOf<CommandType>]));

/** The command types, in the registry's order. */
export const COMMAND_TYPES: readonly CommandType[] = Object.freeze(ENTRIES.map((e) => e.type));

export function isCommandType(t: unknown): t is CommandType {
  return typeof t === 'string' && BY_TYPE.has(t);
}

/** The entry of a command type (a type from validateCommand or the type system: always listed). */
export function entryOf<T extends CommandType>(type: T): EntryOf<T> {
  const e = BY_TYPE.get(type);
  if (e === undefined) throw new Error(`no registry entry for ${type}`);
  return e as unknown as EntryOf<T>;
}

/** A decoder of one oneof member: the body's reader and the entry's meta give the command. */
export type MemberDecoder = { kind: 'request' | 'lease'; decode: (b: BodyReader, meta: RequestMeta) => Command };

/** An entry seen by the codec: any of them, decoders taking the meta its kind gets. */
interface LooseEntry {
  kind: 'request' | 'lease';
  member: string;
  decode: MemberDecoder['decode'];
  legacy?: Readonly<Record<string, MemberDecoder['decode']>>;
}

function membersOf(e: LooseEntry): Array<[string, MemberDecoder]> {
  const decoders: Array<[string, MemberDecoder['decode']]> = [[e.member, e.decode], ...Object.entries(e.legacy ?? {})];
  return decoders.map(([member, decode]) => [member, { kind: e.kind, decode }]);
}

const BY_MEMBER: ReadonlyMap<string, MemberDecoder> = new Map(ENTRIES.flatMap((e) => membersOf(e as unknown as LooseEntry)));

/** The decoder of a state.proto `body` member, current or legacy (undefined: no command is carried in it). */
export function decoderOfMember(member: string): MemberDecoder | undefined {
  return BY_MEMBER.get(member);
}

export type { BodyReader, MachineState, PermissionScope, WireBody } from './entry';
export type { MetaOf };
