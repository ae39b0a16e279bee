// The test side of electionWorker.ts: starts a campaigner process, hands out its JSON lines in order, and
// sends it commands. Every campaigner started is killed by stopAll().
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import { PROJECT_ROOT } from './harness';

const WORKER = path.join(PROJECT_ROOT, 'dist/test/integration/electionWorker.js');

export interface WorkerLine {
  k: string;
  token?: string;
  index?: string;
  code?: string;
  reason?: string;
  message?: string;
}

const started = new Set<Campaigner>();

export class Campaigner {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly queue: WorkerLine[] = [];
  private waiting: ((line: WorkerLine) => void) | undefined;
  private buffered = '';
  private stderr = '';
  readonly exited: Promise<void>;

  constructor(
    readonly id: string,
    config: { endpoints: string[]; election: string; ttlMs: number },
  ) {
    this.child = spawn(process.execPath, [WORKER, JSON.stringify({ ...config, id })], { stdio: ['pipe', 'pipe', 'pipe'] });
    started.add(this);
    this.child.stdout.on('data', (d: Buffer) => this.take(d.toString()));
    this.child.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve) => this.child.on('exit', () => resolve()));
  }

  /** The next line, skipping `ready` and campaign retries; rejects if none comes within `ms`. */
  async next(ms = 20_000): Promise<WorkerLine> {
    for (;;) {
      const line = await this.nextRaw(ms);
      if (line.k !== 'ready' && line.k !== 'campaign-failed') return line;
    }
  }

  /** The next line of kind `k` (others are an error). */
  async expect(k: string, ms?: number): Promise<WorkerLine> {
    const line = await this.next(ms);
    if (line.k !== k) throw new Error(`${this.id}: expected ${k}, got ${JSON.stringify(line)} (stderr: ${this.stderr})`);
    return line;
  }

  send(command: 'write' | 'proclaim' | 'resign'): void {
    this.child.stdin.write(`${command}\n`);
  }

  signal(sig: 'SIGKILL' | 'SIGSTOP' | 'SIGCONT'): void {
    this.child.kill(sig);
  }

  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
    started.delete(this);
  }

  static async stopAll(): Promise<void> {
    await Promise.all([...started].map((c) => c.kill()));
  }

  private nextRaw(ms: number): Promise<WorkerLine> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        reject(new Error(`${this.id}: no line within ${ms} ms (stderr: ${this.stderr})`));
      }, ms);
      this.waiting = (line) => {
        clearTimeout(timer);
        this.waiting = undefined;
        resolve(line);
      };
    });
  }

  private take(text: string): void {
    this.buffered += text;
    for (let nl = this.buffered.indexOf('\n'); nl >= 0; nl = this.buffered.indexOf('\n')) {
      const line = JSON.parse(this.buffered.slice(0, nl)) as WorkerLine;
      this.buffered = this.buffered.slice(nl + 1);
      if (this.waiting) this.waiting(line);
      else this.queue.push(line);
    }
  }
}
