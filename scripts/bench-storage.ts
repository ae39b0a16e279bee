/**
 * Storage micro-benchmark: persists per second of LevelStorage (one synced LevelDB batch each) for batches of
 * 1, 16 and 128 entries of 100 bytes, plus hard state, as the Ready loop writes them.
 *
 *   npx tsc -p tsconfig.json && node dist/scripts/bench-storage.js [--seconds 3] [--dir /path/on/the/disk]
 *
 * --dir picks the file system to measure (default: os.tmpdir()); a temp folder is made in it and removed afterwards.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { performance } from 'perf_hooks';
import { EntryType, type Entry } from '../src/raft/types';
import { LevelStorage } from '../src/storage/levelStorage';

const ENTRY_BYTES = 100;
const BATCH_SIZES = [1, 16, 128];

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function run(root: string, batchSize: number, seconds: number): Promise<void> {
  const dir = path.join(root, `batch-${batchSize}`);
  const storage = await LevelStorage.open(dir);
  await storage.load();
  const data = new Uint8Array(ENTRY_BYTES).fill(0x61);
  let index = 0;
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + seconds * 1000;
  while (performance.now() < deadline) {
    const entries: Entry[] = [];
    for (let i = 0; i < batchSize; i++) entries.push({ term: 1, index: ++index, type: EntryType.Normal, data });
    const t0 = performance.now();
    await storage.persist({ hardState: { term: 1, vote: 'n1', commit: index - batchSize }, entries });
    latencies.push(performance.now() - t0);
  }
  const elapsed = (performance.now() - started) / 1000;
  await storage.close();
  latencies.sort((a, b) => a - b);
  const persists = latencies.length;
  console.log(
    `batch ${String(batchSize).padStart(3)} x ${ENTRY_BYTES} B: ` +
      `${(persists / elapsed).toFixed(0).padStart(6)} persists/s, ` +
      `${((persists * batchSize) / elapsed).toFixed(0).padStart(7)} entries/s, ` +
      `${((persists * batchSize * ENTRY_BYTES) / elapsed / 1e6).toFixed(2).padStart(6)} MB/s, ` +
      `latency p50 ${percentile(latencies, 50).toFixed(2)} ms, p99 ${percentile(latencies, 99).toFixed(2)} ms ` +
      `(${persists} persists in ${elapsed.toFixed(1)} s)`,
  );
}

async function main(): Promise<void> {
  const seconds = Number(arg('seconds') ?? 3);
  const base = path.resolve(arg('dir') ?? os.tmpdir());
  fs.mkdirSync(base, { recursive: true });
  const root = fs.mkdtempSync(path.join(base, 'fencelock-bench-storage-'));
  console.log(`LevelStorage persist benchmark, sync: true, ${seconds} s per batch size, in ${root}`);
  try {
    for (const size of BATCH_SIZES) await run(root, size, seconds);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
