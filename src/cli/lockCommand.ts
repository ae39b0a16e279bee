import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { FenceLockClient, isFenceLockError, type FenceLockClientOptions, type PermitHandle, type Session } from '../client';
import { CommandFailure, EXIT, EXIT_CMD_NOT_EXECUTABLE, EXIT_CMD_NOT_FOUND } from './exitCodes';
import { grantSubject, releaseAndClose, watchForLoss, type HeldGrantHandle } from './heldLock';
import { holdUntilDone } from './lockHold';
import { takeLockSet } from './lockSet';
import { clientOf, type CliIO } from './output';
import { ENV_AUTH_TOKEN } from './security';
import { cliSessionName } from './sessionName';
import { explainUnreachable } from './unreachable';

export interface LockCommandOptions {
  /** How to connect; its bearer token is passed on to CMD as FENCELOCK_AUTH_TOKEN. */
  client: FenceLockClientOptions;
  /** FENCELOCK_CACERT/CERT/KEY/INSECURE for CMD: the TLS or plaintext choice this command connected with. */
  childEnv: Record<string, string>;
  /** The CAs trusted and where from (ClientSecurity.trust), for an untrusted server certificate. */
  trust?: string;
  /**
   * The lock (or with --permits the semaphore) NAME; several (`lock A B C -- CMD`): taken at once with
   * Lock.AcquireAll, one grant and one token for all (lockSet.ts).
   */
  names: string[];
  /** The command and its arguments; none: hold the lock until SIGINT/SIGTERM/SIGHUP or the end of stdin. */
  command: string[];
  ttlMs: number;
  waitMs: number;
  /** --lock-delay: the grant's lock-delay in ms (0: none). */
  lockDelayMs?: number;
  /** --shared: a shared (read) grant; CMD's fenced writes under its token are refused SHARED_GRANT. */
  shared?: boolean;
  /** --permits N: take a permit of the semaphore NAME with N permits instead of the lock NAME (issue 33). */
  permits?: number;
  /** --label: the session's labels, besides host and pid. */
  labels?: Record<string, string>;
  /** Between SIGTERM and SIGKILL of CMD when the lock is lost (unused without CMD). */
  graceMs: number;
  /** The --timeout of the CLI, for the message when no leader is found. */
  timeoutMs: number;
  /** --json: the loss of the lock is reported once, at the end, as JSON (no notice on stderr as it happens). */
  json?: boolean;
}

/**
 * CMD ran (or was stopped when the lock was lost, reported as text on stderr): its exit code and the token.
 * Without CMD: 0 once released, EXIT.LOCK_LOST when lost while held.
 */
export interface LockOutcome {
  exitCode: number;
  token: bigint;
  /** With --permits: the permit's slot. */
  slot?: number;
}

const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
type ForwardedSignal = (typeof FORWARDED_SIGNALS)[number];

export function signalExitCode(sig: NodeJS.Signals | string): number {
  const n = (osConstants.signals as Record<string, number>)[sig];
  return 128 + (n ?? 1);
}

/**
 * `fencelock lock NAME -- CMD ARGS...`: opens a session, waits for the lock, runs CMD with FENCELOCK_TOKEN,
 * FENCELOCK_LOCK, FENCELOCK_LOCKS (the names, one a line), FENCELOCK_SESSION and FENCELOCK_ENDPOINTS (and FENCELOCK_AUTH_TOKEN) in its environment while the session is renewed, and
 * releases when CMD exits. When the lock is presumed lost (no renewal acknowledged for TTL minus the safety
 * margin, or the leader says the session is gone), CMD gets SIGTERM, then SIGKILL after the grace period, and the
 * exit code is EXIT.LOCK_LOST. SIGINT/SIGTERM/SIGHUP are forwarded to CMD. Resolves to CMD's exit code; a lock
 * held (--wait 0), a wait interrupted, a CMD that cannot be run (and with --json a lost lock) throw a CommandFailure.
 * `fencelock lock NAME` (no CMD) waits the same way, then holds the lock until told to let go (lockHold.ts).
 * Several names: the same for the set, taken whole (AcquireAll); the loss of any of its locks is its loss.
 */
export async function runLockCommand(o: LockCommandOptions, io: CliIO): Promise<LockOutcome> {
  const client = new FenceLockClient(o.client);
  let interrupted: string | undefined;
  const onSignalWhileWaiting = (sig: string): void => {
    // Give up the wait: closing the client closes the session, which removes our place in the queue.
    interrupted = sig;
    void client.close();
  };
  const waitHandlers = FORWARDED_SIGNALS.map((sig) => [sig, () => onSignalWhileWaiting(sig)] as const);
  for (const [sig, h] of waitHandlers) io.signals.on(sig, h);

  const name = o.names[0] ?? '';
  let session: Session;
  let lock: HeldGrantHandle;
  let slot: number | undefined;
  try {
    session = await client.openSession({ ttlMs: o.ttlMs, name: cliSessionName(`fencelock lock ${o.names.join(' ')}`, process.pid), labels: o.labels });
    if (o.names.length > 1) {
      lock = await takeLockSet(client, session, o.names, o.waitMs, notRun(o));
    } else if (o.permits !== undefined) {
      const permit = await takePermit(client, session, o, o.permits);
      lock = permit;
      slot = permit.slot;
    } else if (o.waitMs === 0) {
      const got = await session.tryAcquire(name, { lockDelayMs: o.lockDelayMs, mode: o.shared === true ? 'shared' : 'exclusive' }).catch((err: unknown) => {
        // As a held lock is with --wait 0: not granted now, try later (exit 3), the refusal says until when.
        if (isFenceLockError(err) && err.reason === 'LOCK_DELAYED') throw new CommandFailure('LOCK_DELAYED', `${err.details ?? err.message}${notRun(o)}`, EXIT.UNAVAILABLE);
        throw err;
      });
      if (!got) throw new CommandFailure('LOCK_HELD', `lock ${JSON.stringify(name)} is held by ${await holderOf(client, name)} (--wait 0)${notRun(o)}`, EXIT.UNAVAILABLE);
      lock = got;
    } else {
      lock = await session.acquire(name, { waitTimeoutMs: o.waitMs, lockDelayMs: o.lockDelayMs, mode: o.shared === true ? 'shared' : 'exclusive' });
    }
  } catch (err) {
    const explained = interrupted ? err : await explainUnreachable(client, err, o.timeoutMs, undefined, o.trust);
    await client.close().catch(() => undefined);
    if (interrupted) throw interruptedWaiting(o, interrupted);
    throw explained;
  } finally {
    for (const [sig, h] of waitHandlers) io.signals.off(sig, h);
  }
  if (interrupted) {
    await client.close().catch(() => undefined);
    throw interruptedWaiting(o, interrupted);
  }
  const held = { session, lock, client };
  const [cmd, ...args] = o.command;
  const withSlot = slot === undefined ? {} : { slot };
  if (cmd === undefined) return { exitCode: await holdUntilDone(o, io, held), token: lock.token, ...withSlot };

  const env: NodeJS.ProcessEnv = {
    ...io.env,
    FENCELOCK_TOKEN: lock.token.toString(),
    // FENCELOCK_LOCK is kv put's default --lock: for a set there is none to default to, so none is passed on.
    FENCELOCK_LOCK: o.names.length === 1 ? name : undefined,
    FENCELOCK_LOCKS: o.names.join('\n'),
    FENCELOCK_SESSION: session.id,
    FENCELOCK_ENDPOINTS: client.endpoints().join(','),
    // A permit's slot: downstream resources fence per (semaphore, slot) (docs/fencing-downstream.md "Semaphores").
    ...(slot === undefined ? {} : { FENCELOCK_SLOT: String(slot) }),
  };
  // CMD connects the way we did (a `kv put` inside it included): same CA and client certificate, or plaintext.
  if (env.FENCELOCK_LOCK === undefined) delete env.FENCELOCK_LOCK;
  for (const [k, v] of Object.entries(o.childEnv)) {
    if (v === '') delete env[k];
    else env[k] = v;
  }
  // With auth on, a session belongs to the identity that opened it: CMD's writes must come as the same one.
  if (o.client.token !== undefined) env[ENV_AUTH_TOKEN] = o.client.token;
  const outcome = await runHolding(o, io, cmd, args, env, held);
  if (outcome.failure) throw outcome.failure;
  return { exitCode: outcome.exitCode, token: lock.token, ...withSlot };
}

/** A permit of the semaphore NAME (--permits): waits up to --wait; with --wait 0 fails PERMITS_FULL when all are taken. */
async function takePermit(client: FenceLockClient, session: Session, o: LockCommandOptions, permits: number): Promise<PermitHandle> {
  const name = o.names[0] ?? '';
  if (o.waitMs > 0) return session.acquirePermit(name, { permits, waitTimeoutMs: o.waitMs });
  const got = await session.tryAcquirePermit(name, { permits });
  if (got !== null) return got;
  const held = (await client.describeSemaphore(name).catch(() => undefined))?.holders.length ?? permits;
  throw new CommandFailure('PERMITS_FULL', `all ${held} permits of semaphore ${JSON.stringify(name)} are taken (--wait 0)${notRun(o)}`, EXIT.UNAVAILABLE);
}

/** Who holds the lock, as describe shows it; 'another session' when that cannot be read (it may be free by now). */
async function holderOf(client: FenceLockClient, lock: string): Promise<string> {
  const d = await client.describe(lock).catch(() => undefined);
  if (d?.holder == null) return 'another session';
  return `session ${d.holder.handle} (${clientOf(d.holder)})`;
}

/** The end of a message about a lock not taken: CMD, if there is one, did not run. */
function notRun(o: LockCommandOptions): string {
  return o.command.length > 0 ? '; CMD was not run' : '';
}

function interruptedWaiting(o: LockCommandOptions, sig: string): CommandFailure {
  return new CommandFailure('INTERRUPTED', `${sig} while waiting for ${grantSubject(o.names)}: gave up the wait${notRun(o)}`, signalExitCode(sig));
}

/** Runs CMD while the lock is held, stops it when the lock is lost, then releases and closes. */
function runHolding(
  o: LockCommandOptions,
  io: CliIO,
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  held: { session: Session; lock: HeldGrantHandle; client: FenceLockClient },
): Promise<{ exitCode: number; failure?: CommandFailure }> {
  const { lock } = held;
  const subject = grantSubject(o.names);
  return new Promise((resolve) => {
    let lostWhy: string | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let finished = false;
    const child = spawn(cmd, args, { stdio: 'inherit', env });

    const forward = FORWARDED_SIGNALS.map((sig: ForwardedSignal) => [sig, () => void child.kill(sig)] as const);
    for (const [sig, h] of forward) io.signals.on(sig, h);

    const stopWatching = watchForLoss(held.session, lock, (why) => {
      if (finished) return;
      lostWhy = why;
      if (o.json !== true) io.stderr(`fencelock: ${subject} (token ${lock.token}) ${why}; stopping the command\n`);
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), o.graceMs);
    });

    const finish = async (exitCode: number, failure?: CommandFailure): Promise<void> => {
      if (finished) return;
      finished = true;
      stopWatching();
      if (killTimer) clearTimeout(killTimer);
      for (const [sig, h] of forward) io.signals.off(sig, h);
      const why = await releaseAndClose(subject, io, { json: o.json === true, ttlMs: o.ttlMs }, held, lostWhy);
      if (why === undefined) resolve({ exitCode, failure });
      else if (o.json === true) resolve({ exitCode: EXIT.LOCK_LOST, failure: new CommandFailure('LOCK_LOST', `${subject} (token ${lock.token}) ${why}; the command was stopped`, EXIT.LOCK_LOST) });
      else resolve({ exitCode: EXIT.LOCK_LOST });
    };

    child.on('error', (err: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return; // a failed kill or the like: 'exit' still comes
      const notFound = err.code === 'ENOENT';
      const code = notFound ? EXIT_CMD_NOT_FOUND : EXIT_CMD_NOT_EXECUTABLE;
      void finish(code, new CommandFailure(notFound ? 'CMD_NOT_FOUND' : 'CMD_NOT_EXECUTABLE', `cannot run ${JSON.stringify(cmd)}: ${err.message}`, code));
    });
    child.on('exit', (code, signal) => {
      void finish(code !== null ? code : signalExitCode(signal ?? 'SIGKILL'));
    });
  });
}
