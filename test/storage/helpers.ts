import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { EntryType, type Entry, type Snapshot } from '../../src/raft/types';

export function ent(index: number, term: number, data?: string | Uint8Array, type = EntryType.Normal): Entry {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : (data ?? new TextEncoder().encode(`e${index}t${term}`));
  return { index, term, type, data: bytes };
}

/** Entries from..to (inclusive) all with the given term. */
export function ents(from: number, to: number, term: number): Entry[] {
  const out: Entry[] = [];
  for (let i = from; i <= to; i++) out.push(ent(i, term));
  return out;
}

export function snap(index: number, term: number, data: string | Uint8Array = `snap@${index}`, voters = ['n1', 'n2', 'n3']): Snapshot {
  return {
    meta: { index, term, config: { voters } },
    data: typeof data === 'string' ? new TextEncoder().encode(data) : data,
  };
}

/** Temp directories under os.tmpdir(), removed by cleanup(). */
export class TempDirs {
  private readonly dirs: string[] = [];

  make(): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fencelock-storage-test-'));
    this.dirs.push(dir);
    return dir;
  }

  cleanup(): void {
    for (const d of this.dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  }
}
