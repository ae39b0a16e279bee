// `fencelock snapshot save | status | restore` (docs/backup.md).
import * as fs from 'node:fs';
import { Option, type Command } from 'commander';
import type { FenceLockClient } from '../client';
import { BACKUP_FORMAT_VERSION, DEFAULT_BUMP, decodeBackup, type BackupHeader } from '../codec/backupFile';
import { BackupWriter } from './backupWriter';
import { EXIT, UsageError } from './exitCodes';
import { toJson, type CliIO } from './output';
import { parseNonNegativeInt } from './parse';

/** What the snapshot commands need of the program that holds them (see program.ts). */
export interface CommandKit {
  io: CliIO;
  action: <A extends unknown[]>(fn: (...args: A) => Promise<number>) => (...args: A) => Promise<void>;
  withClient: <T>(cmd: Command, fn: (client: FenceLockClient, json: boolean) => Promise<T>) => Promise<T>;
  json: (cmd: Command) => boolean;
  argParser: <T>(fn: (text: string) => T) => (text: string) => T;
}


interface RestoreFlags {
  dataDir?: string;
  member?: string[];
  config?: string;
  /** true: `--bump` without a value (the default bump). */
  bump?: number | true;
  /** false when --no-bump-i-know was given (commander's negated flag). */
  bumpIKnow: boolean;
}

export function addSnapshotCommands(program: Command, kit: CommandKit): void {
  const { io, action } = kit;
  const snapshot = program.command('snapshot').description('back up the cluster\'s state, check a backup, restore a new cluster from one (docs/backup.md)');

  snapshot
    .command('save')
    .description('save a consistent backup, taken by the leader, to FILE (written to FILE.tmp, fsynced, renamed); admin only with auth on')
    .argument('<file>')
    .action(
      action(async (file: string, _opts: unknown, cmd: Command) =>
        kit.withClient(cmd, async (client, json) => {
          const writer = new BackupWriter(file);
          try {
            await client.snapshot(writer);
            const h = await writer.commit();
            io.stdout(json ? `${toJson(headerJson(file, h))}\n` : `saved ${file}: index ${h.index}, term ${h.term}, ${h.size} bytes\n`);
            return EXIT.OK;
          } catch (err) {
            await writer.abandon();
            throw err;
          }
        }),
      ),
    );

  snapshot
    .command('status')
    .description('print a backup\'s index, term, size and format, and verify its checksum (exit 1 when damaged)')
    .argument('<file>')
    .action(
      action(async (file: string, _opts: unknown, cmd: Command) => {
        const h = readBackupHeader(file);
        io.stdout(kit.json(cmd) ? `${toJson(headerJson(file, h))}\n` : formatHeader(file, h));
        return EXIT.OK;
      }),
    );

  snapshot
    .command('restore')
    .description('build the data folder of one member of a NEW cluster from a backup, offline (run once per member)')
    .argument('<file>')
    .option('--data-dir <dir>', 'the member\'s data folder: missing or empty')
    .option('--member <id>', 'a member of the new cluster (repeat for each one; ID or ID=PEER_ADDRESS)', (v: string, all: string[] = []) => [...all, v])
    .option('--config <file>', 'a node config of the new cluster: its members and dataDir must agree with the ones given (or stand for them)')
    .addOption(
      new Option('--bump [n]', `raise the restored log's first index by N (default ${DEFAULT_BUMP}): the new cluster's tokens are then above every token the old one may have issued`).argParser(
        kit.argParser((t) => parseNonNegativeInt(t, '--bump')),
      ),
    )
    .option('--no-bump-i-know', 'restore at the backup\'s own index: only if the old cluster wrote nothing after the backup')
    .action(
      action(async (file: string, opts: RestoreFlags, cmd: Command) => {
        const bump = bumpOf(opts);
        // The node's module: the CLI itself knows nothing of storage or the state machine.
        const { restoreBackup } = await import('../node/backup/restore');
        const members = opts.member?.map(parseMember);
        const report = await restoreBackup({ file, dataDir: opts.dataDir, members, config: opts.config, bump });
        io.stdout(
          kit.json(cmd)
            ? `${toJson(report)}\n`
            : `restored ${file} into ${report.dataDir}: index ${report.index} (backup ${report.backupIndex} + bump ${report.bump}), term ${report.term}, members ${report.voters.join(',')}, ${report.sessionsDropped} sessions dropped\n`,
        );
        return EXIT.OK;
      }),
    );
}

/** The bump asked for; refused when none is given, unless the operator says they mean none. */
function bumpOf(opts: RestoreFlags): number {
  const explicit = opts.bump === true ? DEFAULT_BUMP : opts.bump;
  if (!opts.bumpIKnow) {
    if (explicit !== undefined) throw new UsageError('give either --bump or --no-bump-i-know, not both');
    return 0;
  }
  if (explicit === undefined) {
    throw new UsageError(
      `say how far to raise the restored log: --bump (the default, ${DEFAULT_BUMP}) or --bump N; without it the new cluster could issue tokens the old one issued after the backup. --no-bump-i-know restores without a bump (docs/backup.md)`,
    );
  }
  return explicit;
}

/** `ID` or `ID=ADDRESS`. */
function parseMember(text: string): { id: string; address?: string } {
  const i = text.indexOf('=');
  if (i < 0) return { id: text };
  if (i === 0 || i === text.length - 1) throw new UsageError(`--member ${JSON.stringify(text)}: expected ID or ID=ADDRESS`);
  return { id: text.slice(0, i), address: text.slice(i + 1) };
}

function readBackupHeader(file: string): BackupHeader {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return decodeBackup(bytes).header;
  } catch (err) {
    throw new UsageError(`${file}: ${(err as Error).message}`);
  }
}

function headerJson(file: string, h: BackupHeader): object {
  return { file, format: BACKUP_FORMAT_VERSION, index: h.index, term: h.term, size: h.size, voters: h.voters, takenAt: h.takenAt, checksum: 'ok' };
}

function formatHeader(file: string, h: BackupHeader): string {
  return [
    `file      ${file}`,
    `format    ${BACKUP_FORMAT_VERSION}`,
    `index     ${h.index}`,
    `term      ${h.term}`,
    `size      ${h.size} bytes`,
    `members   ${h.voters.join(',')}`,
    `taken at  ${h.takenAt}`,
    'checksum  ok (SHA-256)',
    '',
  ].join('\n');
}
