// The backup file of `fencelock snapshot save` (docs/backup.md): a header, then the state machine's snapshot
// bytes as the leader encoded them (the body).
//
//   magic "FLBACKUP" | uint32 version (1) | uint64 index | uint64 term | uint64 bodyLength
//   | uint32 metaLength | meta (UTF-8 JSON: { voters, takenAt }) | sha256 (32 bytes) | body
//
// Integers are big-endian. The SHA-256 covers every byte before it and the body, so a flipped bit anywhere
// (the index or term included, not only the body) is found before anything is restored from the file.
import { createHash, type Hash } from 'node:crypto';

/**
 * The default bump of a restore (docs/backup.md): far more entries than a cluster appends between two
 * backups (a thousand million: a year at 30 entries per second, around the clock), so a restored log starts
 * above every index the old cluster may have reached after the backup, hence above every token it may have
 * issued. It costs nothing: indexes are numbers, not slots.
 */
export const DEFAULT_BUMP = 1_000_000_000;

export const BACKUP_MAGIC = Buffer.from('FLBACKUP', 'ascii');
export const BACKUP_FORMAT_VERSION = 1;
const SHA256_BYTES = 32;
/** magic, version, index, term, bodyLength, metaLength. */
const FIXED_BYTES = BACKUP_MAGIC.length + 4 + 8 + 8 + 8 + 4;
/** The meta is a few member names and a date: anything larger is damage, not a backup. */
const MAX_META_BYTES = 64 * 1024;

export interface BackupHeader {
  /** The applied log index the state is of. */
  index: number;
  /** The term of the entry at `index`. */
  term: number;
  /** Bytes of the body. */
  size: number;
  /** The members of the cluster the backup was taken from (informational). */
  voters: string[];
  /** When it was taken (ISO 8601, informational). */
  takenAt: string;
}

/** A file that is not a whole, intact backup: the message says what is wrong with it. */
export class BackupFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupFileError';
  }
}

/** The bytes of the header before its checksum. */
export function headerPrefix(h: BackupHeader): Buffer {
  const meta = Buffer.from(JSON.stringify({ voters: h.voters, takenAt: h.takenAt }), 'utf8');
  const out = Buffer.alloc(FIXED_BYTES + meta.length);
  let off = BACKUP_MAGIC.copy(out, 0);
  off = out.writeUInt32BE(BACKUP_FORMAT_VERSION, off);
  off = out.writeBigUInt64BE(BigInt(h.index), off);
  off = out.writeBigUInt64BE(BigInt(h.term), off);
  off = out.writeBigUInt64BE(BigInt(h.size), off);
  off = out.writeUInt32BE(meta.length, off);
  meta.copy(out, off);
  return out;
}

/** The whole header (prefix and checksum) of a body whose hash, seeded with the prefix, is `digest`. */
export function encodeHeader(prefix: Buffer, digest: Buffer): Buffer {
  return Buffer.concat([prefix, digest]);
}

/** A hash over the header prefix, to be fed the body: its digest is the file's checksum. */
export function checksumOf(prefix: Buffer): Hash {
  return createHash('sha256').update(prefix);
}

/** A whole backup file in memory (tests and tools). */
export function encodeBackup(h: BackupHeader, body: Uint8Array): Buffer {
  const prefix = headerPrefix({ ...h, size: body.length });
  return Buffer.concat([encodeHeader(prefix, checksumOf(prefix).update(body).digest()), body]);
}

/** Reads and verifies a backup file's bytes: the header and the body, or a BackupFileError. */
export function decodeBackup(file: Uint8Array): { header: BackupHeader; body: Uint8Array } {
  const b = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  if (b.length < FIXED_BYTES + SHA256_BYTES) throw new BackupFileError(`${b.length} bytes: too short for a fencelock backup header`);
  if (!b.subarray(0, BACKUP_MAGIC.length).equals(BACKUP_MAGIC)) throw new BackupFileError('not a fencelock backup (the file does not start with "FLBACKUP")');
  let off = BACKUP_MAGIC.length;
  const version = b.readUInt32BE(off);
  off += 4;
  if (version !== BACKUP_FORMAT_VERSION) throw new BackupFileError(`unsupported backup format version ${version} (this fencelock reads version ${BACKUP_FORMAT_VERSION})`);
  const index = readNumber(b, off, 'index');
  const term = readNumber(b, off + 8, 'term');
  const size = readNumber(b, off + 16, 'body length');
  off += 24;
  const metaLength = b.readUInt32BE(off);
  off += 4;
  if (metaLength > MAX_META_BYTES || off + metaLength + SHA256_BYTES > b.length) throw new BackupFileError(`damaged header: a meta of ${metaLength} bytes does not fit`);
  const metaEnd = off + metaLength;
  const expected = b.subarray(metaEnd, metaEnd + SHA256_BYTES);
  const body = b.subarray(metaEnd + SHA256_BYTES);
  if (body.length !== size) throw new BackupFileError(`the header says ${size} bytes of data, the file holds ${body.length}: truncated or damaged`);
  const actual = checksumOf(b.subarray(0, metaEnd)).update(body).digest();
  if (!actual.equals(expected)) throw new BackupFileError('checksum mismatch: the file is damaged (SHA-256 of its header and data differs from the one it was saved with)');
  const meta = parseMeta(b.subarray(off, metaEnd));
  return { header: { index, term, size, ...meta }, body };
}

function readNumber(b: Buffer, off: number, what: string): number {
  const v = b.readBigUInt64BE(off);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new BackupFileError(`damaged header: ${what} ${v} is out of range`);
  return Number(v);
}

/** The meta, once the checksum matched (so a malformed one is a writer's bug, still reported, never thrown raw). */
function parseMeta(bytes: Buffer): Pick<BackupHeader, 'voters' | 'takenAt'> {
  let meta: unknown;
  try {
    meta = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new BackupFileError('damaged header: its meta is not JSON');
  }
  const m = meta as { voters?: unknown; takenAt?: unknown };
  const voters = Array.isArray(m.voters) && m.voters.every((v) => typeof v === 'string') ? (m.voters as string[]) : undefined;
  if (voters === undefined || typeof m.takenAt !== 'string') throw new BackupFileError('damaged header: its meta lacks voters or takenAt');
  return { voters, takenAt: m.takenAt };
}
