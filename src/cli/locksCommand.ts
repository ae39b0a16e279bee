// `fencelock locks [PREFIX]`: the held and awaited locks (Lock.List, every page) with their holders' client
// names and labels, as a table or JSON, once or refreshed every second like top until interrupted.
import { Option, type Command } from 'commander';
import type { FenceLockClient, LockSummary } from '../client';
import { EXIT } from './exitCodes';
import { clientOf, table, toJson, type CliIO } from './output';
import { parsePositiveInt } from './parse';
import type { CommandKit } from './snapshotCommand';

const REFRESH_MS = 1_000;
/** Waiters shown in a table row; the rest are counted. */
const WAITERS_SHOWN = 3;
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/** Home the cursor and clear the screen, as top does between refreshes. */
const CLEAR_SCREEN = '\x1b[H\x1b[2J';

interface LocksFlags {
  all?: boolean;
  limit: number;
  watch?: boolean;
}

export function addLocksCommand(program: Command, kit: CommandKit): void {
  program
    .command('locks')
    .description('held and awaited locks under PREFIX, in name order: holder, token, how long held, waiters (with auth on, only the locks you may lock)')
    .argument('[prefix]', 'lock name prefix', '')
    .option('--all', 'also idle locks the cluster keeps because they own keys')
    .addOption(new Option('--limit <n>', 'show at most this many locks').argParser(kit.argParser((t) => parsePositiveInt(t, '--limit'))).default(1_000))
    .option('--watch', 'refresh every second, like top, until interrupted (Ctrl-C); with --json one document per refresh')
    .action(
      kit.action(async (prefix: string, flags: LocksFlags, cmd: Command) =>
        kit.withClient(cmd, async (client, json) => {
          const show = async (): Promise<void> => {
            const locks = await readLocks(client, prefix, flags);
            if (json) kit.io.stdout(`${toJson({ locks })}\n`);
            else kit.io.stdout(`${flags.watch === true && process.stdout.isTTY ? CLEAR_SCREEN : ''}${locksTable(locks)}`);
          };
          if (flags.watch !== true) {
            await show();
            return EXIT.OK;
          }
          return refreshUntilStopped(kit.io, show);
        }),
      ),
    );
}

async function readLocks(client: FenceLockClient, prefix: string, flags: LocksFlags): Promise<LockSummary[]> {
  const out: LockSummary[] = [];
  for await (const lock of client.locks({ prefix, includeIdle: flags.all === true, limit: Math.min(flags.limit, 1_000) })) {
    out.push(lock);
    if (out.length >= flags.limit) break;
  }
  return out;
}

/** Calls `show` every second until a stop signal; a failed refresh is reported and the next one tried. */
async function refreshUntilStopped(io: CliIO, show: () => Promise<void>): Promise<number> {
  let stopped = false;
  let wake = (): void => undefined;
  const stop = (): void => {
    stopped = true;
    wake();
  };
  for (const sig of STOP_SIGNALS) io.signals.on(sig, stop);
  try {
    while (!stopped) {
      await show().catch((err: unknown) => io.stderr(`fencelock: ${err instanceof Error ? err.message : String(err)} (still watching)\n`));
      if (stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, REFRESH_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    for (const sig of STOP_SIGNALS) io.signals.off(sig, stop);
  }
  return EXIT.OK;
}

export function locksTable(locks: readonly LockSummary[]): string {
  if (locks.length === 0) return '(no locks)\n';
  const rows = locks.map((l) => [l.lock, holderCell(l), l.held ? l.token.toString() : '-', l.held ? duration(l.heldForMs) : '-', waitersCell(l), l.holder === null ? '-' : clientOf(l.holder)]);
  // The holder's client name and labels last: a quoted name and labels may hold spaces, which would blur the columns after it.
  return table(['LOCK', 'HOLDER', 'TOKEN', 'HELD', 'WAITERS', 'CLIENT'], rows);
}

/** The holder's handle; for a free lock in its lock-delay, the time the delay has left. */
function holderCell(l: LockSummary): string {
  if (l.held) return l.holderSession;
  return l.delayedUntilMs > 0 ? `(delayed ${duration(l.delayRemainingMs)})` : '-';
}

/** The first waiters, FIFO, each with how long it has waited; then how many more. */
function waitersCell(l: LockSummary): string {
  if (l.waiterCount === 0) return '-';
  const shown = l.waiters.slice(0, WAITERS_SHOWN).map((w) => `${w.session}(${w.waitingMs === 0 ? '?' : duration(w.waitingMs)})`);
  const more = l.waiterCount - shown.length;
  return more > 0 ? `${shown.join(' ')} +${more}` : shown.join(' ');
}

/** 950ms, 12s, 3m04s, 2h05m. */
export function duration(ms: number): string {
  if (ms < 1_000) return `${ms}ms`;
  const s = Math.floor(ms / 1_000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
