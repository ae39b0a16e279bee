import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { performance } from 'node:perf_hooks';
import { FenceLockClient, isFenceLockError, type FenceLockClientOptions, type LockHandle, type Session } from '../client';
import { CommandFailure, EXIT, EXIT_CMD_NOT_EXECUTABLE, EXIT_CMD_NOT_FOUND, UsageError } from './exitCodes';
import type { CliIO } from './output';
import { ENV_AUTH_TOKEN } from './security';
import { explainUnreachable, withoutGrpcNoise } from './unreachable';

export interface LockCommandOptions {
  /** How to connect; its bearer token is passed on to CMD as FENCELOCK_AUTH_TOKEN. */
  client: FenceLockClientOptions;
  /** FENCELOCK_CACERT/CERT/KEY/INSECURE for CMD: the TLS or plaintext choice this command connected with. */
  childEnv: Record<string, string>;
  /** The CAs trusted and where from (ClientSecurity.trust), for an untrusted server certificate. */
  trust?: string;
  name: string;
  /** The command and its arguments. */
  command: string[];
  ttlMs: number;
  waitMs: number;
  /** Between SIGTERM and SIGKILL when the lock is lost. */
  graceMs: number;
  /** The --timeout of the CLI, for the message when no leader is found. */
  timeoutMs: number;
  /** --json: the loss of the lock is reported once, at the end, as JSON (no notice on stderr as it happens). */
  json?: boolean;
}

/** CMD ran (or was stopped when the lock was lost, reported as text on stderr): its exit code and the token. */
export interface LockOutcome {
  exitCode: number;
  token: bigint;
}

const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
type ForwardedSignal = (typeof FORWARDED_SIGNALS)[number];

function signalExitCode(sig: NodeJS.Signals | string): number {
  const n = (osConstants.signals as Record<string, number>)[sig];
  return 128 + (n ?? 1);
}

/**
 * `fencelock lock NAME -- CMD ARGS...`: opens a session, waits for the lock, runs CMD with FENCELOCK_TOKEN,
 * FENCELOCK_LOCK, FENCELOCK_SESSION and FENCELOCK_ENDPOINTS (and FENCELOCK_AUTH_TOKEN) in its environment while the session is renewed, and
 * releases when CMD exits. When the lock is presumed lost (no renewal acknowledged for TTL minus the safety
 * margin, or the leader says the session is gone), CMD gets SIGTERM, then SIGKILL after the grace period, and the
 * exit code is EXIT.LOCK_LOST. SIGINT/SIGTERM/SIGHUP are forwarded to CMD. Resolves to CMD's exit code; a lock
 * held (--wait 0), a wait interrupted, a CMD that cannot be run (and with --json a lost lock) throw a CommandFailure.
 */
export async function runLockCommand(o: LockCommandOptions, io: CliIO): Promise<LockOutcome> {
  const [cmd, ...args] = o.command;
  if (cmd === undefined) throw new UsageError('lock: no command to run (fencelock lock NAME -- CMD [ARGS...])');
  const client = new FenceLockClient(o.client);
  let interrupted: string | undefined;
  const onSignalWhileWaiting = (sig: string): void => {
    // Give up the wait: closing the client closes the session, which removes our place in the queue.
    interrupted = sig;
    void client.close();
  };
  const waitHandlers = FORWARDED_SIGNALS.map((sig) => [sig, () => onSignalWhileWaiting(sig)] as const);
  for (const [sig, h] of waitHandlers) io.signals.on(sig, h);

  let session: Session;
  let lock: LockHandle;
  try {
    session = await client.openSession({ ttlMs: o.ttlMs, name: `fencelock lock ${o.name} (pid ${process.pid})` });
    if (o.waitMs === 0) {
      const got = await session.tryAcquire(o.name);
      if (!got) throw new CommandFailure('LOCK_HELD', `lock ${JSON.stringify(o.name)} is held by another session (--wait 0); CMD was not run`, EXIT.UNAVAILABLE);
      lock = got;
    } else {
      lock = await session.acquire(o.name, { waitTimeoutMs: o.waitMs });
    }
  } catch (err) {
    const explained = interrupted ? err : await explainUnreachable(client, err, o.timeoutMs, undefined, o.trust);
    await client.close().catch(() => undefined);
    if (interrupted) throw interruptedWaiting(o.name, interrupted);
    throw explained;
  } finally {
    for (const [sig, h] of waitHandlers) io.signals.off(sig, h);
  }
  if (interrupted) {
    await client.close().catch(() => undefined);
    throw interruptedWaiting(o.name, interrupted);
  }

  const env: NodeJS.ProcessEnv = {
    ...io.env,
    FENCELOCK_TOKEN: lock.token.toString(),
    FENCELOCK_LOCK: o.name,
    FENCELOCK_SESSION: session.id,
    FENCELOCK_ENDPOINTS: client.endpoints().join(','),
  };
  // CMD connects the way we did (a `kv put` inside it included): same CA and client certificate, or plaintext.
  for (const [k, v] of Object.entries(o.childEnv)) {
    if (v === '') delete env[k];
    else env[k] = v;
  }
  // With auth on, a session belongs to the identity that opened it: CMD's writes must come as the same one.
  if (o.client.token !== undefined) env[ENV_AUTH_TOKEN] = o.client.token;
  const outcome = await runHolding(o, io, cmd, args, env, session, lock, client);
  if (outcome.failure) throw outcome.failure;
  return { exitCode: outcome.exitCode, token: lock.token };
}

function interruptedWaiting(name: string, sig: string): CommandFailure {
  return new CommandFailure('INTERRUPTED', `${sig} while waiting for lock ${JSON.stringify(name)}: gave up the wait; CMD was not run`, signalExitCode(sig));
}

/** Runs CMD while the lock is held, stops it when the lock is lost, then releases and closes. */
function runHolding(
  o: LockCommandOptions,
  io: CliIO,
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  session: Session,
  lock: LockHandle,
  client: FenceLockClient,
): Promise<{ exitCode: number; failure?: CommandFailure }> {
  return new Promise((resolve) => {
    let lostWhy: string | undefined;
    let watchTimer: NodeJS.Timeout | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let finished = false;
    const child = spawn(cmd, args, { stdio: 'inherit', env });

    const forward = FORWARDED_SIGNALS.map((sig: ForwardedSignal) => [sig, () => void child.kill(sig)] as const);
    for (const [sig, h] of forward) io.signals.on(sig, h);

    const lockLost = (why: string): void => {
      if (lostWhy !== undefined || finished) return;
      lostWhy = why;
      if (o.json !== true) io.stderr(`fencelock: lock ${JSON.stringify(o.name)} (token ${lock.token}) ${why}; stopping the command\n`);
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), o.graceMs);
    };

    // Re-check at the presumed-lost moment; renewals keep pushing it later.
    const watch = (): void => {
      watchTimer = undefined;
      if (finished || lostWhy !== undefined) return;
      if (lock.isPresumedLost()) {
        lockLost('is presumed lost (no renewal acknowledged in time)');
        return;
      }
      const wait = Math.min(1_000, Math.max(5, lock.presumedLostAt() - performance.now()));
      watchTimer = setTimeout(watch, wait);
    };
    watch();
    session.onLost((err) => lockLost(`was lost: ${err.message}`));

    const finish = async (exitCode: number, failure?: CommandFailure): Promise<void> => {
      if (finished) return;
      finished = true;
      if (watchTimer) clearTimeout(watchTimer);
      if (killTimer) clearTimeout(killTimer);
      for (const [sig, h] of forward) io.signals.off(sig, h);
      if (lostWhy === undefined && lock.isPresumedLost()) lostWhy = 'was presumed lost as the command ended';
      if (lostWhy === undefined) {
        try {
          await lock.release();
        } catch (err) {
          if (isFenceLockError(err, 'FAILED_PRECONDITION') || isFenceLockError(err, 'NOT_FOUND')) {
            lostWhy = `was no longer held at release: ${(err as Error).message}`;
            if (o.json !== true) io.stderr(`fencelock: lock ${JSON.stringify(o.name)} ${lostWhy}\n`);
          } else {
            io.stderr(`fencelock: warning: release failed (${withoutGrpcNoise((err as Error).message)}); the lock is freed when the session closes or expires\n`);
          }
        }
      }
      try {
        // After a loss the leader is likely unreachable: do not hold the exit up for long.
        await session.close(lostWhy !== undefined ? { timeoutMs: 2_000 } : {});
      } catch (err) {
        io.stderr(`fencelock: warning: closing the session failed (${withoutGrpcNoise((err as Error).message)}); it expires after ${o.ttlMs} ms\n`);
      }
      await client.close().catch(() => undefined);
      if (lostWhy === undefined) resolve({ exitCode, failure });
      else if (o.json === true) resolve({ exitCode: EXIT.LOCK_LOST, failure: new CommandFailure('LOCK_LOST', `lock ${JSON.stringify(o.name)} (token ${lock.token}) ${lostWhy}; the command was stopped`, EXIT.LOCK_LOST) });
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
