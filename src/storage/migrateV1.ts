/**
 * Converts a store of format "fencelock-raft-v1" (one LevelDB value per log entry, key 0x02 + uint64 BE
 * index) to the current format (one value per run of entries, ./segments.ts) in one synced batch: the entry
 * keys go, the segments and the new marker come in the same write, so a crash leaves either format whole.
 * Hard state and snapshot keep their keys. Every entry's checksum and index are checked on the way; the
 * log's other rules are checked when the converted store is loaded.
 */
import type { Level } from 'level';
import { CodecError, decodeEntry } from '../codec/raftCodec';
import type { Entry } from '../raft/types';
import { unframe } from './checksum';
import { indexKey, indexOfKey, INDEX_KEY_LENGTH, type BatchOp, type PutOp } from './keys';
import { StorageCorruptError } from './types';

export const V1_FORMAT_MARKER = 'fencelock-raft-v1';

const V1_ENTRY_PREFIX = 0x02;
/** Entries per segment written by the conversion (a value of a few hundred KiB at most). */
const ENTRIES_PER_SEGMENT = 1_024;

export interface CurrentFormat {
  marker: { key: Uint8Array; value: Uint8Array };
  /** The put that stores consecutive entries as one segment. */
  segment: (entries: readonly Entry[]) => PutOp;
}

/** The v1 key of entry `index` (tests write v1 stores with it). */
export function v1EntryKey(index: number): Uint8Array {
  return indexKey(V1_ENTRY_PREFIX, index);
}

export async function migrateV1Store(db: Level<Uint8Array, Uint8Array>, dir: string, current: CurrentFormat): Promise<void> {
  const corrupt = (msg: string): StorageCorruptError => new StorageCorruptError(`corrupt Raft storage at ${dir} (format ${V1_FORMAT_MARKER}): ${msg}`);
  const ops: BatchOp[] = [];
  let run: Entry[] = [];
  const endRun = (): void => {
    if (run.length > 0) ops.push(current.segment(run));
    run = [];
  };
  const gte = Uint8Array.of(V1_ENTRY_PREFIX);
  const lt = Uint8Array.of(V1_ENTRY_PREFIX + 1);
  for await (const [key, value] of db.iterator({ gte, lt })) {
    if (key.length !== INDEX_KEY_LENGTH) throw corrupt(`unexpected key ${Buffer.from(key).toString('hex')}`);
    const index = indexOfKey(key);
    const entry = decodeV1Entry(index, value, corrupt);
    const prev = run.at(-1);
    // A gap (which the load refuses anyway) or a full run starts a new segment.
    if ((prev !== undefined && prev.index + 1 !== index) || run.length >= ENTRIES_PER_SEGMENT) endRun();
    run.push(entry);
    ops.push({ type: 'del', key });
  }
  endRun();
  ops.push({ type: 'put', key: current.marker.key, value: current.marker.value });
  await db.batch(ops, { sync: true });
}

function decodeV1Entry(index: number, value: Uint8Array, corrupt: (msg: string) => StorageCorruptError): Entry {
  const payload = unframe(value);
  if (!payload) throw corrupt(`entry ${index}: checksum mismatch or truncated value (${value.length} bytes)`);
  let entry: Entry;
  try {
    entry = decodeEntry(payload);
  } catch (err) {
    if (err instanceof CodecError) throw corrupt(`entry ${index}: ${err.message}`);
    throw err;
  }
  if (entry.index !== index) throw corrupt(`entry stored under index ${index} says index ${entry.index}`);
  return entry;
}
