import { FenceLockError } from '../client';

/** Exit codes of the `fencelock` command (also listed in `fencelock --help`). */
export const EXIT = {
  /** Success. */
  OK: 0,
  /** Usage error, malformed input, or an error that fits no other code. */
  USAGE: 1,
  /** Refused by fencing (FAILED_PRECONDITION): stale token, lock not held, wrong lock. */
  FENCED: 2,
  /** No leader reachable, or a timeout (including a lock wait that timed out, or a held lock with --wait 0). */
  UNAVAILABLE: 3,
  /** `lock -- CMD`: the lock was (presumed) lost while CMD ran; CMD was stopped. `lock NAME`: lost while held. */
  LOCK_LOST: 4,
  /** Not found: unknown or deleted key (kv get), unknown session, user, role or token. */
  NOT_FOUND: 5,
  /** UNAUTHENTICATED: the cluster has auth on and the call carried no identity, or a token it does not know. */
  UNAUTHENTICATED: 6,
  /** PERMISSION_DENIED: the identity's roles do not allow the call (or the session is another identity's). */
  PERMISSION_DENIED: 7,
  /** RESOURCE_EXHAUSTED: a limit or a quota of the identity is reached (QUOTA_EXCEEDED names the quota). */
  LIMIT: 8,
  /** `check-resource`: a fencing rule did not hold at the resource checked (the table says which). */
  CHECK_FAILED: 9,
  /** `status`: a leader is known, but a node that answered has fallen behind it (more than --max-lag). */
  BEHIND: 10,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** `lock -- CMD` when CMD cannot be started: like a shell, 127 when not found, 126 when not executable. */
export const EXIT_CMD_NOT_FOUND = 127;
export const EXIT_CMD_NOT_EXECUTABLE = 126;

export const EXIT_CODES_HELP = `Exit codes:
  0    success
  1    usage error or bad input (or an error with no better code)
  2    refused by fencing (FAILED_PRECONDITION: stale token, lock not held, ...)
  3    unavailable or timed out (no leader, lock wait timed out, lock held with --wait 0);
       status: no node answers, or none of those that answer leads or knows a leader
  4    lock lost while CMD ran (CMD was sent SIGTERM, then SIGKILL), or while lock NAME held it
  5    not found (kv get of a missing or deleted key, unknown session, user, role or token)
  6    unauthenticated (auth is on: no identity, or an unknown or revoked token)
  7    permission denied (the identity's roles do not allow it; another identity's session)
  8    a limit or quota reached (RESOURCE_EXHAUSTED; a quota of the identity is named)
  9    check-resource: a fencing rule did not hold at the resource (the table says which)
  10   status: a node that answered is behind the leader (more than --max-lag entries)
  lock -- CMD otherwise exits with CMD's own code (128+N when killed by signal N;
  126/127 when CMD cannot be run / is not found).`;

/** A mistake on the command line or in the environment: reported without a stack, exit code 1. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * A command that failed for a reason of its own, not a call's (the lock was held, CMD could not be run, the
 * lock was lost while CMD ran): a code for scripts (`LOCK_HELD`, `LOCK_LOST`, `CMD_NOT_FOUND`, ...) and its exit code.
 */
export class CommandFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'CommandFailure';
  }
}

/** The exit code for an error from a command. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof UsageError) return EXIT.USAGE;
  if (err instanceof CommandFailure) return err.exitCode;
  if (err instanceof FenceLockError) {
    switch (err.code) {
      case 'FAILED_PRECONDITION':
        return EXIT.FENCED;
      case 'UNAVAILABLE':
      case 'DEADLINE_EXCEEDED':
        return EXIT.UNAVAILABLE;
      case 'NOT_FOUND':
        return EXIT.NOT_FOUND;
      case 'UNAUTHENTICATED':
        return EXIT.UNAUTHENTICATED;
      case 'PERMISSION_DENIED':
        return EXIT.PERMISSION_DENIED;
      case 'RESOURCE_EXHAUSTED':
        return EXIT.LIMIT;
      default:
        return EXIT.USAGE;
    }
  }
  return EXIT.USAGE;
}
