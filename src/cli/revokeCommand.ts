// `fencelock revoke LOCK [--reason TEXT] [--token N]` (issue 34): an admin ends a lock's current grant without
// ending its holder's session (docs/auth.md "Ending sessions").
import type { Command } from 'commander';
import { parseDecimalUint64, type FenceLockClient } from '../client';
import { EXIT, UsageError } from './exitCodes';
import { toJson, type CliIO } from './output';

type Action = <A extends unknown[]>(fn: (...args: A) => Promise<number>) => (...args: A) => Promise<void>;
type WithClient = <T>(cmd: Command, fn: (client: FenceLockClient, json: boolean) => Promise<T>) => Promise<T>;

export function addRevokeCommand(program: Command, io: CliIO, action: Action, withClient: WithClient): void {
  program
    .command('revoke')
    .description("end lock LOCK's current grant (admin only): the next waiter gets it with a higher token, the holder's session goes on and its client loses the lock with reason REVOKED")
    .argument('<lock>', 'lock name')
    .option('--reason <text>', 'why, for the audit log and watchers (up to 256 bytes)', '')
    .option('--token <n>', 'revoke only if this is still the current grant (as describe shows it)')
    .addHelpText(
      'after',
      `
Exits ${EXIT.FENCED} (FAILED_PRECONDITION) when nobody holds LOCK (LOCK_NOT_HELD), or when --token is not the
current grant's (WRONG_TOKEN). A holder running \`fencelock lock LOCK -- CMD\` sees CMD stopped and exits ${EXIT.LOCK_LOST}.
Example: fencelock revoke backup --reason "host backup-2 hung" --token 1042`,
    )
    .action(
      action(async (lock: string, opts: { reason: string; token?: string }, cmd: Command) => {
        if (lock === '') throw new UsageError('revoke: LOCK names no lock');
        const token = opts.token === undefined ? undefined : parseToken(opts.token);
        return withClient(cmd, async (client, json) => {
          const r = await client.revokeLock(lock, { reason: opts.reason, token });
          const delayedUntilMs = r.nextHolderSession === '' ? await lockDelayEnd(client, lock) : 0;
          if (json) io.stdout(`${toJson({ lock, ...r, ...(delayedUntilMs > 0 ? { delayedUntilMs } : {}) })}\n`);
          else io.stdout(`lock ${JSON.stringify(lock)}: grant with token ${r.endedToken} revoked; ${whatNext(r, delayedUntilMs)}\n`);
          return EXIT.OK;
        });
      }),
    );
}

/**
 * A revoke starts the grant's lock-delay, if it had one: nobody is handed the lock until it ends, so "free"
 * would mislead. The revoke's answer does not carry the delay; Describe does (0 when none, or unknown).
 */
async function lockDelayEnd(client: FenceLockClient, lock: string): Promise<number> {
  try {
    const d = await client.describe(lock);
    return d.delayRemainingMs > 0 ? d.delayedUntilMs : 0;
  } catch {
    return 0;
  }
}

function whatNext(r: { nextHolderSession: string; nextToken: bigint }, delayedUntilMs: number): string {
  if (r.nextHolderSession !== '') return `handed to session ${r.nextHolderSession} with token ${r.nextToken}`;
  if (delayedUntilMs > 0) return `the lock is in its lock-delay until ${new Date(delayedUntilMs).toISOString()} (granted to nobody until then; waiters keep their places)`;
  return 'the lock is free';
}

function parseToken(text: string): bigint {
  const token = parseDecimalUint64(text);
  if (token === undefined || token < 1n) throw new UsageError(`--token: ${JSON.stringify(text)} is not a token (a decimal number >= 1)`);
  return token;
}
