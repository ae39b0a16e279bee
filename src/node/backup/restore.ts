// `fencelock snapshot restore` (docs/backup.md): the data folder of one member of a NEW cluster, built offline
// from a backup file. Run once per member, each with its own data folder; every member gets the same state.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { decodeBackup } from '../../codec/backupFile';
import { RAFT_NUMBER_LIMIT, type NodeId, type SnapshotMeta } from '../../raft/types';
import { LockStateMachine } from '../../state';
import { crc32 } from '../../storage/checksum';
import { LevelStorage } from '../../storage/levelStorage';
import { loadConfig, type MemberAddresses } from '../config';

/**
 * A restored log starts below this, at a term below it: half the Raft number space (2^47, RAFT_NUMBER_LIMIT
 * / 2) stays for the new cluster's own entries and terms, and for the bumps of its own restores (140,000 of
 * them at the default bump).
 */
export const MAX_RESTORED_INDEX = RAFT_NUMBER_LIMIT / 2;

/** A restore that must not run: the message says why and what to do instead. Nothing was written. */
export class RestoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RestoreError';
  }
}

/** A member of the new cluster: its id, and the address given with it (kept for member lists that carry one). */
export interface RestoreMember {
  id: NodeId;
  address?: string;
}

export interface RestoreOptions {
  /** The backup file (`fencelock snapshot save`). */
  file: string;
  /** The member's data folder: must be missing or empty. With `config`, defaults to the config's dataDir. */
  dataDir?: string;
  /** Every member of the new cluster. With `config`, defaults to the config's members. */
  members?: RestoreMember[];
  /** A node config of the new cluster: its members and data folder must agree with the ones given. */
  config?: string;
  /** Added to the backup's index: the restored log starts there. 0 only on purpose (see docs/backup.md). */
  bump: number;
}

export interface RestoreReport {
  dataDir: string;
  backupIndex: number;
  bump: number;
  /** The restored snapshot's index: every entry, hence every token, of the new cluster is above it. */
  index: number;
  term: number;
  voters: NodeId[];
  /** Sessions of the backup, ended by the restore. */
  sessionsDropped: number;
  bytes: number;
}

/**
 * The Raft snapshot meta a restored member starts from: the backup's index and term, both raised by `bump`,
 * and the new cluster's members as voters. The one place that says what a restored meta holds (the member
 * list will grow learners and addresses when membership changes arrive).
 *
 * The term is raised too: a node of the old cluster that comes back with its old log (the same addresses and
 * cluster id) has a last log term below the restored one, so it wins no vote against a restored member, and
 * its lower term gets it nothing but the restored leader's term, then that leader's snapshot. Kept at the
 * backup's term, it could hold a later term of the old cluster and be elected over the restored log.
 */
export function restoredSnapshotMeta(
  backup: { index: number; term: number },
  bump: number,
  members: readonly RestoreMember[],
  addresses?: Record<string, MemberAddresses>,
): SnapshotMeta {
  // Without addresses (--member ID only) each node reaches the others by its own config file's members.
  const config = addresses === undefined ? { voters: members.map((m) => m.id).sort() } : { voters: members.map((m) => m.id).sort(), addresses };
  return { index: backup.index + bump, term: backup.term + bump, config };
}

/** Builds the member's data folder from the backup; checks everything before it writes anything. */
export async function restoreBackup(opts: RestoreOptions): Promise<RestoreReport> {
  const { dataDir, members, addresses } = resolveTarget(opts);
  if (!Number.isSafeInteger(opts.bump) || opts.bump < 0) throw new RestoreError(`--bump must be a whole number >= 0, got ${opts.bump}`);
  const { header, body } = decodeBackup(await readBackupFile(opts.file));
  const meta = restoredSnapshotMeta(header, opts.bump, members, addresses);
  if (meta.index >= MAX_RESTORED_INDEX || meta.term >= MAX_RESTORED_INDEX) {
    throw new RestoreError(
      `the restored index ${meta.index} and term ${meta.term} (backup ${header.index} and ${header.term}, + bump ${opts.bump}) would leave less than half of the Raft number space (2^48): choose a smaller --bump`,
    );
  }
  await refuseUnlessEmpty(dataDir);
  const { machine, sessionsEnded } = LockStateMachine.restoredForNewCluster(body, meta.index);
  const data = machine.writeSnapshot();
  const storage = await LevelStorage.open(dataDir);
  try {
    // Written as a follower stores a leader's snapshot: one synced batch, the hard state committing it.
    await storage.persist({
      hardState: { term: meta.term, vote: '', commit: meta.index },
      entries: [],
      snapshot: { meta: { ...meta, crc32: crc32(data) }, data },
    });
  } finally {
    await storage.close();
  }
  return { dataDir, backupIndex: header.index, bump: opts.bump, index: meta.index, term: meta.term, voters: meta.config.voters, sessionsDropped: sessionsEnded, bytes: data.length };
}

/** The data folder and members, from the options and the node config, which must agree. */
function resolveTarget(opts: RestoreOptions): { dataDir: string; members: RestoreMember[]; addresses?: Record<string, MemberAddresses> } {
  let dataDir = opts.dataDir === undefined ? undefined : path.resolve(opts.dataDir);
  let members = opts.members;
  let addresses: Record<string, MemberAddresses> | undefined;
  if (opts.config !== undefined) {
    const config = loadConfig(opts.config);
    addresses = Object.fromEntries(Object.entries(config.members).map(([id, m]) => [id, { client: m.client, peer: m.peer }]));
    const configured = Object.keys(config.members).sort();
    if (members === undefined) members = configured.map((id) => ({ id, address: config.members[id]?.peer }));
    const given = members.map((m) => m.id).sort();
    if (given.join(',') !== configured.join(',')) {
      throw new RestoreError(`--member ${given.join(',')} differs from the members of ${opts.config} (${configured.join(',')}): the restored cluster's voters must be the members its nodes are configured with`);
    }
    if (dataDir !== undefined && dataDir !== config.dataDir) throw new RestoreError(`--data-dir ${dataDir} is not the dataDir of ${opts.config} (${config.dataDir})`);
    dataDir = config.dataDir;
  }
  if (dataDir === undefined) throw new RestoreError('say where: --data-dir DIR (or --config NODE.json)');
  if (members === undefined || members.length === 0) throw new RestoreError('name every member of the new cluster: --member ID once per member (or --config NODE.json)');
  const ids = members.map((m) => m.id);
  for (const id of ids) if (!/^[A-Za-z0-9_-]{1,32}$/.test(id)) throw new RestoreError(`member id ${JSON.stringify(id)} must be 1-32 letters, digits, - or _ (as a node config's id)`);
  if (new Set(ids).size !== ids.length) throw new RestoreError(`a member is named twice in --member ${ids.join(',')}`);
  return { dataDir, members, addresses };
}

async function readBackupFile(file: string): Promise<Buffer> {
  try {
    return await fs.promises.readFile(file);
  } catch (err) {
    throw new RestoreError(`cannot read the backup ${file}: ${(err as Error).message}`);
  }
}

/** A live or old member's data is never overwritten: the folder must be missing or empty. */
async function refuseUnlessEmpty(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await fs.promises.readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new RestoreError(`cannot read the data folder ${dir}: ${(err as Error).message}`);
  }
  if (names.length > 0) {
    throw new RestoreError(`the data folder ${dir} is not empty (${names.length} entries): a restore never writes over a node's data; give a new folder, or move this one away first`);
  }
}
