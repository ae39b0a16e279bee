// The commands of the replicated lock state machine: what a committed log entry asks it to do. Each one is
// an entry of the command registry (registry/*.ts: its type, codec, validation, permission and execution);
// this module names them together and validates any value as a command.
//
// Every field is chosen by the leader before the entry is proposed, so applying an entry is deterministic:
// `now` is the leader's clock (ms) when it proposed the entry, `sessionId` of OpenSession comes from the
// leader's random source. The node encodes commands into log entries (protobufjs); the state machine only
// sees decoded plain objects, which the codec does not check: apply validates them (validateCommand), once,
// because a log entry may carry anything a buggy or older proposer wrote.
import { isNonNegativeInt, isRecord, validateRequestMeta } from './registry/checks';
import { entryOf, isCommandType, type Command, type CommandType } from './registry/index';

export type { AuthChange, AuthChangeOp } from './auth/changes';
export { AUTH_RULES_CLOSED_WHEN_OFF } from './auth/changes';

export type { RequestMeta } from './registry/entry';
export type { OpenSessionCommand } from './registry/openSession';
export type { CloseSessionCommand } from './registry/closeSession';
export type { RevokeSessionCommand } from './registry/revokeSession';
export type { RevokeLockCommand } from './registry/revokeLock';
export type { ExpireSessionCommand } from './registry/expireSession';
export type { CheckpointLeasesCommand, LeaseCheckpoint } from './registry/checkpointLeases';
export type { EndLockDelaysCommand, LockDelayRef } from './registry/endLockDelays';
export type { AcquireCommand } from './registry/acquire';
export type { CancelWaitCommand } from './registry/cancelWait';
export type { ReleaseCommand } from './registry/release';
export type { WriteCommand } from './registry/write';
export type { DeleteOp, PutOp, WriteOp } from './writeOps';
export type { AuthChangeCommand } from './registry/authChange';
export type { MoveKeysCommand } from './registry/moveKeys';
export { COMMAND_TYPES, isCommandType, type Command, type CommandType, type ResultOf } from './registry/index';
export { checkKey, checkLockName, validateRequestMeta } from './registry/checks';

/** The commands only a leader proposes, for its lease duties: no RequestMeta, not de-duplicated. */
export type LeaseCommand = Extract<Command, { type: 'ExpireSession' | 'CheckpointLeases' | 'EndLockDelays' }>;

/** Commands that carry RequestMeta and are de-duplicated. */
export type RequestCommand = Exclude<Command, LeaseCommand>;

/** True for command types that carry RequestMeta and go through the de-duplication table. */
export function isRequestCommandType(t: CommandType): t is RequestCommand['type'] {
  return entryOf(t).kind === 'request';
}

/**
 * Full validation of a decoded command (shape, types and limits): its clock, its request meta, then its
 * entry's own checks. Returns a message, or null when the command is valid. Never throws, whatever `c` is.
 */
export function validateCommand(c: unknown): string | null {
  if (!isRecord(c)) return 'a command must be an object';
  if (!isCommandType(c.type)) return 'unknown command type';
  if (!isNonNegativeInt(c.now)) return 'now must be an integer >= 0 (ms)';
  if (entryOf(c.type).kind === 'request') {
    const metaProblem = validateRequestMeta(c);
    if (metaProblem !== null) return metaProblem;
  }
  return entryOf(c.type).validate(c);
}

/**
 * validateCommand for a request whose type and ids were checked already (the machine checks them first,
 * so that an invalid request with valid ids still has its `invalid` answer stored): its clock and body.
 */
export function validateRequestBody(type: RequestCommand['type'], c: Record<string, unknown>): string | null {
  if (!isNonNegativeInt(c.now)) return 'now must be an integer >= 0 (ms)';
  return entryOf(type).validate(c);
}
