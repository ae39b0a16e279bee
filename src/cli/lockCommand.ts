import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { performance } from 'node:perf_hooks';
import { FenceLockClient, isFenceLockError, type Logger, type LockHandle, type Session } from '../client';
import { EXIT, EXIT_CMD_NOT_EXECUTABLE, EXIT_CMD_NOT_FOUND, UsageError } from './exitCodes';
import type { CliIO } from './output';
import { ENV_AUTH_TOKEN, type ClientSecurity } from './security';

export interface LockCommandOptions {
  endpoints: string[];
  /** TLS or plaintext, as resolved from the flags and environment; passed on to CMD's environment too. */
  security: ClientSecurity;
  /** The bearer token (see resolveAuthToken); passed on to CMD as FENCELOCK_AUTH_TOKEN. */
  authToken?: string;
  name: string;
  /** The command and its arguments. */
  command: string[];
  ttlMs: number;
  waitMs: number;
  /** Between SIGTERM and SIGKILL when the lock is lost. */
  graceMs: number;
  logger?: Logger;
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
 * exit code is EXIT.LOCK_LOST. SIGINT/SIGTERM/SIGHUP are forwarded to CMD. Resolves to the exit code.
 */
export async function runLockCommand(o: LockCommandOptions, io: CliIO): Promise<number> {
  const [cmd, ...args] = o.command;
  if (cmd === undefined) throw new UsageError('lock: no command to run (fencelock lock NAME -- CMD [ARGS...])');
  const client = new FenceLockClient({ endpoints: o.endpoints, tls: o.security.tls, insecure: o.security.insecure, token: o.authToken, logger: o.logger });
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
      if (!got) {
        io.stderr(`fencelock: lock ${JSON.stringify(o.name)} is held by another session\n`);
        await client.close();
        return EXIT.UNAVAILABLE;
      }
      lock = got;
    } else {
      lock = await session.acquire(o.name, { waitTimeoutMs: o.waitMs });
    }
  } catch (err) {
    await client.close().catch(() => undefined);
    if (interrupted) return signalExitCode(interrupted);
    throw err;
  } finally {
    for (const [sig, h] of waitHandlers) io.signals.off(sig, h);
  }
  if (interrupted) {
    await client.close().catch(() => undefined);
    return signalExitCode(interrupted);
  }

  const env: NodeJS.ProcessEnv = {
    ...io.env,
    FENCELOCK_TOKEN: lock.token.toString(),
    FENCELOCK_LOCK: o.name,
    FENCELOCK_SESSION: session.id,
    FENCELOCK_ENDPOINTS: client.endpoints().join(','),
  };
  // CMD connects the way we did (a `kv put` inside it included): same CA and client certificate, or plaintext.
  for (const [k, v] of Object.entries(o.security.childEnv)) {
    if (v === '') delete env[k];
    else env[k] = v;
  }
  // With auth on, a session belongs to the identity that opened it: CMD's writes must come as the same one.
  if (o.authToken !== undefined) env[ENV_AUTH_TOKEN] = o.authToken;

  return new Promise<number>((resolve) => {
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
      io.stderr(`fencelock: lock ${JSON.stringify(o.name)} (token ${lock.token}) ${why}; stopping the command\n`);
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

    const finish = async (exitCode: number): Promise<void> => {
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
            lostWhy = 'was no longer held at release';
            io.stderr(`fencelock: lock ${JSON.stringify(o.name)} ${lostWhy}: ${(err as Error).message}\n`);
          } else {
            io.stderr(`fencelock: warning: release failed (${(err as Error).message}); the lock is freed when the session closes or expires\n`);
          }
        }
      }
      try {
        // After a loss the leader is likely unreachable: do not hold the exit up for long.
        await session.close(lostWhy !== undefined ? { timeoutMs: 2_000 } : {});
      } catch (err) {
        io.stderr(`fencelock: warning: closing the session failed (${(err as Error).message}); it expires after ${o.ttlMs} ms\n`);
      }
      await client.close().catch(() => undefined);
      resolve(lostWhy !== undefined ? EXIT.LOCK_LOST : exitCode);
    };

    child.on('error', (err: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return; // a failed kill or the like: 'exit' still comes
      io.stderr(`fencelock: cannot run ${JSON.stringify(cmd)}: ${err.message}\n`);
      void finish(err.code === 'ENOENT' ? EXIT_CMD_NOT_FOUND : EXIT_CMD_NOT_EXECUTABLE);
    });
    child.on('exit', (code, signal) => {
      void finish(code !== null ? code : signalExitCode(signal ?? 'SIGKILL'));
    });
  });
}
