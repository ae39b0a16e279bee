// The proxy's watermarks on disk: an append-only log, one JSON line per accepted claim, fsynced before the
// request is forwarded. Appending one short line costs one small write and one fsync per request, whatever the
// number of resources (rewriting a whole snapshot file each time would grow with them). A crash can leave only
// a torn last line, of a claim that was therefore never forwarded: it is dropped on open. On open the log is
// also compacted (one line per resource, written to a temp file, fsynced, renamed over, directory fsynced)
// when it has grown well past its number of resources.
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

  private constructor(
    readonly file: string,
    private handle: fsp.FileHandle,
    private readonly marks: Map<string, Watermark>,
    /** Lines dropped on open: a torn last record of a crash. */
    readonly droppedTail: boolean,
  ) {}

  static async open(file: string): Promise<WatermarkLog> {
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
    if (droppedTail || lines.length > 2 * marks.size + 64) await WatermarkLog.rewrite(file, marks);
    const handle = await fsp.open(file, 'a');
    return new WatermarkLog(file, handle, marks, droppedTail);
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

  /** Appends and fsyncs the resource's new watermark; resolves once it is durable. Records are written in call order. */
  record(resource: string, mark: Watermark): Promise<void> {
    const write = this.tail.then(async () => {
      await this.handle.write(encode(resource, mark));
      await this.handle.sync();
      this.marks.set(resource, mark);
    });
    this.tail = write.catch(() => undefined);
    return write;
  }

  async close(): Promise<void> {
    await this.tail;
    await this.handle.close();
  }
}
