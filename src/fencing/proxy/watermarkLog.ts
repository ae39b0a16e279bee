// The proxy's watermarks on disk: an append-only log, one JSON line per accepted claim, fsynced before the
// request is forwarded. Appending one short line costs one small write and one fsync per request, whatever the
// number of resources (rewriting a whole snapshot file each time would grow with them). A crash can leave only
// a torn last line, of a claim that was therefore never forwarded: it is dropped on open. On open the log is
// compacted (one line per resource, written to a temp file, fsynced, renamed over, directory fsynced) when it
// has grown well past its number of resources, on open and while running. The number of resources is bounded
// (maxResources): with the compaction that bounds the file to 2 * maxResources + 64 lines.
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { UNFENCED, type Watermark } from '../watermark';

interface Line {
  r: string;
  l: string;
  t: string;
  s: string;
}

function encode(resource: string, m: Watermark): string {
  return `${JSON.stringify({ r: resource, l: m.lock ?? '', t: m.fence.toString(), s: m.step.toString() } satisfies Line)}\n`;
}

function decode(text: string, lineNo: number, file: string): [string, Watermark] {
  try {
    const o = JSON.parse(text) as Line;
    if (typeof o.r !== 'string' || typeof o.l !== 'string' || !/^\d+$/.test(o.t) || !/^\d+$/.test(o.s)) throw new Error('missing fields');
    return [o.r, { lock: o.l === '' ? null : o.l, fence: BigInt(o.t), step: BigInt(o.s) }];
  } catch (err) {
    throw new Error(`${file}:${lineNo}: not a watermark record (${(err as Error).message}); the log is damaged, refusing to start`);
  }
}

/** The default bound on the number of resources the log keeps. */
export const DEFAULT_MAX_RESOURCES = 100_000;

/** A claim for a new resource when the log already keeps maxResources: nothing was recorded. */
export class StateFull extends Error {}

/** Compaction is due once the file holds this many more lines than resources. */
function compactionDue(lines: number, resources: number): boolean {
  return lines > 2 * resources + 64;
}

async function fsyncDir(dir: string): Promise<void> {
  const h = await fsp.open(dir, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

export class WatermarkLog {
  private tail: Promise<void> = Promise.resolve();
  /** Lines in the file now. */
  private lines: number;

  private constructor(
    readonly file: string,
    private handle: fsp.FileHandle,
    private readonly marks: Map<string, Watermark>,
    /** Lines dropped on open: a torn last record of a crash. */
    readonly droppedTail: boolean,
    readonly maxResources: number,
  ) {
    this.lines = marks.size;
  }

  /** A log holding more than maxResources resources opens (it was written under a higher bound) but takes no new one. */
  static async open(file: string, maxResources = DEFAULT_MAX_RESOURCES): Promise<WatermarkLog> {
    if (!Number.isInteger(maxResources) || maxResources < 1) throw new RangeError(`maxResources must be a positive integer, got ${maxResources}`);
    let text = '';
    try {
      text = await fsp.readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const end = text.lastIndexOf('\n') + 1;
    const droppedTail = end < text.length;
    const marks = new Map<string, Watermark>();
    const lines = text.slice(0, end).split('\n').slice(0, -1);
    lines.forEach((l, i) => {
      const [r, m] = decode(l, i + 1, file);
      const prev = marks.get(r);
      // Records only ever raise a watermark; keep the highest in case of a hand-edited log.
      if (!prev || m.fence > prev.fence || (m.fence === prev.fence && m.step > prev.step)) marks.set(r, m);
    });
    const rewritten = droppedTail || compactionDue(lines.length, marks.size);
    if (rewritten) await WatermarkLog.rewrite(file, marks);
    const handle = await fsp.open(file, 'a');
    const log = new WatermarkLog(file, handle, marks, droppedTail, maxResources);
    if (!rewritten) log.lines = lines.length;
    return log;
  }

  /** Replaces the file by one line per resource: temp file, fsync, rename, fsync of the directory. */
  private static async rewrite(file: string, marks: Map<string, Watermark>): Promise<void> {
    const tmp = `${file}.tmp-${process.pid}`;
    const h = await fsp.open(tmp, 'w', 0o600);
    try {
      await h.writeFile([...marks].map(([r, m]) => encode(r, m)).join(''));
      await h.sync();
    } finally {
      await h.close();
    }
    await fsp.rename(tmp, file);
    await fsyncDir(path.dirname(path.resolve(file)));
  }

  get size(): number {
    return this.marks.size;
  }

  get(resource: string): Watermark {
    return this.marks.get(resource) ?? UNFENCED;
  }

  /**
   * Appends and fsyncs the resource's new watermark; resolves once it is durable. Records are written in call
   * order. A resource not yet kept when maxResources are: StateFull, and nothing is written.
   */
  record(resource: string, mark: Watermark): Promise<void> {
    const write = this.tail.then(async () => {
      if (!this.marks.has(resource) && this.marks.size >= this.maxResources) {
        throw new StateFull(`the proxy keeps the watermarks of at most ${this.maxResources} resources and has that many: nothing was forwarded; raise --max-resources or move resources to a proxy of their own`);
      }
      await this.handle.write(encode(resource, mark));
      await this.handle.sync();
      this.marks.set(resource, mark);
      this.lines++;
      // The record is durable already: a failed compaction leaves the longer file, tried again next record.
      if (compactionDue(this.lines, this.marks.size)) await this.compact().catch(() => undefined);
    });
    this.tail = write.catch(() => undefined);
    return write;
  }

  /** Rewrites the file to one line per resource while no record is being written (called inside the tail). */
  private async compact(): Promise<void> {
    await this.handle.close();
    try {
      await WatermarkLog.rewrite(this.file, this.marks);
      this.lines = this.marks.size;
    } finally {
      this.handle = await fsp.open(this.file, 'a');
    }
  }

  async close(): Promise<void> {
    await this.tail;
    await this.handle.close();
  }
}
