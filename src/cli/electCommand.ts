// `fencelock elect NAME VALUE -- CMD`: run CMD while leading election NAME; `fencelock elect --observe NAME`:
// print each leadership as it begins (README, "Elections").
import { spawn } from 'node:child_process';
import { FenceLockClient, isFenceLockError, type FenceLockClientOptions, type Leader, type Leadership } from '../client';
import { CommandFailure, EXIT, EXIT_CMD_NOT_EXECUTABLE, EXIT_CMD_NOT_FOUND, UsageError } from './exitCodes';
import { signalExitCode } from './lockCommand';
import { humanValue, toJson, type CliIO } from './output';
import { ENV_AUTH_TOKEN } from './security';
import { explainUnreachable, withoutGrpcNoise } from './unreachable';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export interface ElectCommandOptions {
  /** How to connect; its bearer token is passed on to CMD as FENCELOCK_AUTH_TOKEN. */
  client: FenceLockClientOptions;
  /** FENCELOCK_CACERT/CERT/KEY/INSECURE for CMD: the TLS or plaintext choice this command connected with. */
  childEnv: Record<string, string>;
  trust?: string;
  name: string;
  value: string;
  command: string[];
  ttlMs: number;
  /** undefined: wait to lead for as long as it takes. */
  waitMs?: number;
  graceMs: number;
  timeoutMs: number;
  json?: boolean;
}

/**
 * Campaigns, then runs CMD as leader with FENCELOCK_TOKEN, FENCELOCK_LOCK (= NAME), FENCELOCK_SESSION,
 * FENCELOCK_ENDPOINTS and FENCELOCK_ELECTION in its environment (like `lock -- CMD`, so `kv put` inside it is
 * fenced by the leadership). When the leadership is lost, CMD gets SIGTERM, then SIGKILL after the grace
 * period, and the exit code is EXIT.LOCK_LOST; otherwise it resigns when CMD exits and returns CMD's code.
 * SIGINT/SIGTERM/SIGHUP give up the wait (exit 128+N), or are forwarded to CMD once it runs.
 */
export async function runElectCommand(o: ElectCommandOptions, io: CliIO): Promise<{ exitCode: number; token: bigint }> {
  const [cmd, ...args] = o.command;
  if (cmd === undefined) throw new UsageError('elect: give the command to run as leader after --, or --observe NAME');
  const client = new FenceLockClient(o.client);
  const giveUp = new AbortController();
  let interrupted: string | undefined;
  const handlers = SIGNALS.map((sig) => [sig, () => ((interrupted = sig), giveUp.abort())] as const);
  for (const [sig, h] of handlers) io.signals.on(sig, h);
  let leadership: Leadership;
  try {
    leadership = await client.election(o.name, { ttlMs: o.ttlMs }).campaign(o.value, { waitMs: o.waitMs, signal: giveUp.signal });
  } catch (err) {
    const explained = interrupted ? err : await explainUnreachable(client, err, o.timeoutMs, undefined, o.trust);
    await client.close().catch(() => undefined);
    if (interrupted) throw new CommandFailure('INTERRUPTED', `${interrupted} while waiting to lead election ${JSON.stringify(o.name)}: gave up the wait; CMD was not run`, signalExitCode(interrupted));
    throw explained;
  } finally {
    for (const [sig, h] of handlers) io.signals.off(sig, h);
  }
  const env: NodeJS.ProcessEnv = {
    ...io.env,
    FENCELOCK_TOKEN: leadership.token.toString(),
    FENCELOCK_LOCK: o.name,
    FENCELOCK_ELECTION: o.name,
    FENCELOCK_SESSION: leadership.lock.session.id,
    FENCELOCK_ENDPOINTS: client.endpoints().join(','),
  };
  for (const [k, v] of Object.entries(o.childEnv)) {
    if (v === '') delete env[k];
    else env[k] = v;
  }
  if (o.client.token !== undefined) env[ENV_AUTH_TOKEN] = o.client.token;
  const exitCode = await runAsLeader(o, io, cmd, args, env, leadership);
  await client.close().catch(() => undefined);
  return { exitCode, token: leadership.token };
}

/** Runs CMD, stops it if the leadership is lost, and resigns when it exits. */
function runAsLeader(o: ElectCommandOptions, io: CliIO, cmd: string, args: string[], env: NodeJS.ProcessEnv, leadership: Leadership): Promise<number> {
  return new Promise((resolve, reject) => {
    let lost: string | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let finished = false;
    const child = spawn(cmd, args, { stdio: 'inherit', env });
    const forward = SIGNALS.map((sig) => [sig, () => void child.kill(sig)] as const);
    for (const [sig, h] of forward) io.signals.on(sig, h);
    const onLoss = (): void => {
      if (finished) return;
      const reason: unknown = leadership.signal.reason;
      lost = reason instanceof Error ? reason.message : String(reason);
      if (o.json !== true) io.stderr(`fencelock: leadership of election ${JSON.stringify(o.name)} (token ${leadership.token}) lost: ${lost}; stopping the command\n`);
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), o.graceMs);
    };
    leadership.signal.addEventListener('abort', onLoss, { once: true });
    const finish = async (exitCode: number, failure?: CommandFailure): Promise<void> => {
      if (finished) return;
      finished = true;
      leadership.signal.removeEventListener('abort', onLoss);
      if (killTimer) clearTimeout(killTimer);
      for (const [sig, h] of forward) io.signals.off(sig, h);
      if (lost === undefined) {
        await leadership.resign().catch((err: unknown) => {
          // Already gone (expired) is what resigning wants; anything else: the session expires after its TTL.
          if (!isFenceLockError(err, 'NOT_FOUND')) io.stderr(`fencelock: warning: resign failed (${withoutGrpcNoise((err as Error).message)}); the session expires after ${o.ttlMs} ms\n`);
        });
      }
      if (failure) reject(failure);
      else if (lost === undefined) resolve(exitCode);
      else if (o.json === true) reject(new CommandFailure('LOCK_LOST', `leadership of election ${JSON.stringify(o.name)} (token ${leadership.token}) lost: ${lost}; the command was stopped`, EXIT.LOCK_LOST));
      else resolve(EXIT.LOCK_LOST);
    };
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return; // a failed kill or the like: 'exit' still comes
      const notFound = err.code === 'ENOENT';
      const code = notFound ? EXIT_CMD_NOT_FOUND : EXIT_CMD_NOT_EXECUTABLE;
      void finish(code, new CommandFailure(notFound ? 'CMD_NOT_FOUND' : 'CMD_NOT_EXECUTABLE', `cannot run ${JSON.stringify(cmd)}: ${err.message}`, code));
    });
    child.on('exit', (code, signal) => void finish(code !== null ? code : signalExitCode(signal ?? 'SIGKILL')));
  });
}

/** One line per event of `elect --observe`: a new leadership, or the end of the last one with none after it yet. */
export function leaderLine(l: Leader, json: boolean): string {
  if (json) return `${toJson({ election: l.election, token: l.token, value: humanValue(l.value), holder: l.holder })}\n`;
  return `election ${JSON.stringify(l.election)}: token ${l.token}, value ${JSON.stringify(humanValue(l.value))}, holder ${l.holder}\n`;
}

export function vacantLine(election: string, endedToken: bigint, json: boolean): string {
  if (json) return `${toJson({ election, vacant: true, endedToken })}\n`;
  return `election ${JSON.stringify(election)}: no leader (leadership ${endedToken} ended)\n`;
}

/** Prints each leadership (and each vacancy) until SIGINT/SIGTERM/SIGHUP: exit 0; a final error rejects. */
export async function runObserveCommand(client: FenceLockClient, name: string, io: CliIO, json: boolean, timeoutMs: number): Promise<number> {
  // Observing retries for ever: first make sure some node answers, or fail within --timeout.
  await client.status().catch(async (err: unknown) => {
    throw await explainUnreachable(client, err, timeoutMs, `observe election ${JSON.stringify(name)}`);
  });
  return new Promise<number>((resolve, reject) => {
    const stop = (): void => {
      for (const sig of SIGNALS) io.signals.off(sig, stop);
      observer.cancel();
      resolve(EXIT.OK);
    };
    const observer = client.election(name).observe((l) => io.stdout(leaderLine(l, json)), {
      onVacant: (ended) => io.stdout(vacantLine(name, ended, json)),
      onError: (err) => {
        for (const sig of SIGNALS) io.signals.off(sig, stop);
        reject(err);
      },
    });
    for (const sig of SIGNALS) io.signals.on(sig, stop);
  });
}
