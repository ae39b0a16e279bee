// What a snapshot encodes: the tables as they were at one applied index, read while apply() goes on.
//
// A node encodes its snapshot a slice at a time between turns of its Ready loop (which must not stop for
// the O(state) encoding), so a capture freezes the tables rather than copying them (like hashicorp/raft's
// FSM.Snapshot: capture cheaply, do the expensive work later):
// - each sorted index hands out its chunks copy on write (sortedIndex.ts): records added or removed after
//   the capture do not show in the frozen chunks;
// - a table saves a record's content the first time it changes it after the capture (SavedImages), and
//   the encoder reads that image instead of the live record.
// Capturing costs O(chunks), not O(records); a change during a capture costs a map lookup, and a copy of
// the record the first time. The session fields a snapshot holds never change, so sessions save nothing.
import { invariant } from './invariant';
import type { SortedIndex } from './sortedIndex';

/** One table as the encoder reads it: records in key order, and each record's content at the capture. */
export interface TableView<R, I> {
  readonly chunks: readonly (readonly R[])[];
  readonly size: number;
  image(record: R): I;
}

/** The first image of each record changed since a capture. */
export class SavedImages<R extends I & object, I> {
  private readonly images = new Map<R, I>();

  constructor(private readonly copy: (record: R) => I) {}

  /** Call before changing `record`: keeps its content as it is now, unless an older image is kept. */
  save(record: R): void {
    if (!this.images.has(record)) this.images.set(record, this.copy(record));
  }

  /** The record's content at the capture (a record that has not changed since is its own image). */
  image(record: R): I {
    return this.images.get(record) ?? record;
  }
}

export function sameRecord<R>(record: R): R {
  return record;
}

/**
 * A table's side of captures: its sorted index, read live or frozen, and while frozen the first image of
 * each record the table changes (the table calls save() before it changes a record).
 */
export class TableCapture<R extends I & object, I> {
  private images: SavedImages<R, I> | null = null;

  constructor(
    private readonly index: SortedIndex<R>,
    private readonly copy: (record: R) => I,
  ) {}

  /** The records read straight from the live table: only while nothing changes (a synchronous encoding). */
  view(size: number): TableView<R, I> {
    return { chunks: this.index.chunksInOrder(), size, image: sameRecord };
  }

  /** The records as they are now, readable until thaw() while the table goes on changing. */
  freeze(size: number): TableView<R, I> {
    invariant(this.images === null, 'the table is frozen already');
    const images = new SavedImages<R, I>(this.copy);
    this.images = images;
    return { chunks: this.index.freeze(), size, image: (record) => images.image(record) };
  }

  thaw(): void {
    this.images = null;
    this.index.thaw();
  }

  /** Keeps the record's content for the open capture, if any, before the table changes it. */
  save(record: R): void {
    this.images?.save(record);
  }
}

/**
 * A snapshot being encoded from a capture, a slice at a time. The tables stay frozen until it finishes or
 * is cancelled: a caller that drops it must cancel it, or every change keeps saving images.
 */
export class SnapshotEncoding {
  private result: Uint8Array | undefined;
  private released = false;

  constructor(
    /** The applied index the snapshot is of. */
    readonly index: number,
    private readonly slices: Generator<void, Uint8Array, void>,
    private readonly release: () => void,
  ) {}

  /** Encodes the next slice (a bounded amount of work); true once the whole snapshot is encoded. */
  step(): boolean {
    if (this.result !== undefined) return true;
    invariant(!this.released, 'a cancelled snapshot encoding was stepped');
    let next: IteratorResult<void, Uint8Array>;
    try {
      next = this.slices.next();
    } catch (err) {
      this.end();
      throw err;
    }
    if (next.done !== true) return false;
    this.result = next.value;
    this.end();
    return true;
  }

  /** The snapshot bytes, once step() returned true. */
  bytes(): Uint8Array {
    invariant(this.result !== undefined, 'snapshot bytes asked for before the encoding finished');
    return this.result;
  }

  /** Stops encoding and thaws the tables. */
  cancel(): void {
    this.end();
  }

  private end(): void {
    if (this.released) return;
    this.released = true;
    this.release();
  }
}
