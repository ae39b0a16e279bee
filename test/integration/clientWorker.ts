// A chaos client in a process of its own (compiled to dist/test/integration/clientWorker.js), so that the
// nemesis can SIGSTOP and SIGCONT a whole client: its keepalives stop, its lease runs out on the leader, its
// lock goes to the next waiter, and when it wakes up it carries on with its old token (the frozen holder).
//
//   node dist/test/integration/clientWorker.js '<json WorkerConfig>'
//
// It runs a test/chaos Workload (its own clients, the same lock namespace as the other workloads of the run,
// so it contends on the same hot locks) and streams its recorded Operations to stdout as JSON lines:
//
//   {"k":"ready","pid":..}                  started
//   {"k":"call","ops":[{...}]}              an operation was called (outcome unknown so far)
//   {"k":"done","ops":[{...}]}              it returned (ok / fail / unknown with a return time)
//   {"k":"pong","seq":n,"t":..}             answer to "ping <n>" on stdin (clock calibration)
//   {"k":"holding","lock":..,"token":..}    the holder (below) was just granted a lock and sleeps before writing
//   {"k":"session","id":..}                 the scripted waiter's session is open (it calls acquire next)
//   {"k":"waiter-done","outcome":..}        the scripted waiter's acquire (and write, release) are over
//   {"k":"end","stats":{...}}               stopped ("stop" or "abort" on stdin, or SIGTERM); then exit 0
//
// Operations are streamed on call and on return (not only at exit), so a worker that dies, or is still
// frozen when the run ends, leaves its in-flight calls in the parent's history as unknown.
//
// One clock for every process of a run: `performance.timeOrigin + performance.now() - epoch`, where epoch is
// the parent's choice (in WorkerConfig). timeOrigin is the wall clock at process start (microsecond
// resolution) and now() the monotonic time since, so the sum is comparable across processes of one host,
// up to wall-clock adjustments between the processes' starts. The parent measures the remaining offset with
// ping/pong and widens the worker's intervals by it (chaos/clientWorkers.ts, chaos/history.ts): a wider interval only admits more
// orders, so the check stays sound.
//
// With `holder`, the worker also runs one "slow holder" client: acquire a hot lock, announce it, sleep
// `holdMs` (doing nothing, like a process in a long GC pause), then write under the token, read, release.
// The nemesis SIGSTOPs the worker right after the announcement (pause-holder in chaos/clientFaults.ts) for longer
// than the session TTL: the lease expires, the lock goes to a waiter who writes, and when the holder wakes up
// its write under the old token must be refused (docs/architecture.md#promises, promise 2). The write goes through client.write, not
// LockHandle.write, so the client library's own "lease presumed lost" guard does not hide it from the server.
//
// Client ids are prefixed with the worker's name (the server's request dedup is keyed by client id), and so
// are the recorded process names, so that operations of different processes never share a name.
import { performance } from 'node:perf_hooks';
import * as readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { FenceLockClient, type Session } from '../../src/client';
import { historyToJSON, type Operation } from '../checker/history';
import { Recorder } from '../chaos/recorder';
import { Workload, type WorkloadOptions } from '../chaos/workload';

export interface WorkerConfig {
  /** Names this worker: prefix of its client ids and process names. */
  name: string;
  /** The run's time origin (ms, on the performance.timeOrigin + performance.now() scale). */
  epoch: number;
  /** Workload options (endpoints, clients, namespace, seed, TTLs...); recorder and factories are set here. */
  workload: Omit<WorkloadOptions, 'recorder' | 'createClient' | 'logger'>;
  /** Also run the slow holder (see the header) on the workload's hot locks. */
  holder?: { holdMs: number; ttlMs: number; waitMs: number };
  /**
   * Instead of the workload clients (clients is then ignored): one scripted waiter that opens a session,
   * announces it ({"k":"session","id":..}), blocks in acquire(lock, waitMs), and if granted writes under the
   * token and releases. For scenarios that freeze a queued waiter (chaos.test.ts).
   */
  waiter?: { lock: string; waitMs: number; ttlMs: number };
}

/** The run clock: wall-clock origin of this process plus monotonic time, minus the run's epoch. */
export function runClock(epoch: number): () => number {
  return () => performance.timeOrigin + performance.now() - epoch;
}

function emit(obj: unknown): void {
  process.stdout.write(`${historyToJSON(obj as never)}\n`);
}

async function main(): Promise<void> {
  const cfg = JSON.parse(process.argv[2] ?? '') as WorkerConfig;
  const recorder = new Recorder({ now: runClock(cfg.epoch) });
  const prefix = `${cfg.name}-`;
  const workload = new Workload({
    ...cfg.workload,
    recorder,
    createClient: (o) => new FenceLockClient({ ...o, clientId: `${prefix}${o.clientId ?? 'x'}` }),
  });

  // Stream calls and returns. The recorder appends on call and completes in place, so a cursor finds new
  // calls and a pending set finds completions.
  let cursor = 0;
  const pending = new Map<number, Operation>();
  const named = (o: Operation): Operation => ({ ...o, process: `${prefix}${o.process}` });
  const flush = (final: boolean): void => {
    const ops = recorder.operations();
    for (; cursor < ops.length; cursor++) {
      const o = ops[cursor]!;
      emit({ k: 'call', ops: [named(o)] });
      pending.set(o.id, o);
    }
    for (const [id, o] of pending) {
      if (o.ret !== undefined || o.outcome !== 'unknown') {
        emit({ k: 'done', ops: [named(o)] });
        pending.delete(id);
      } else if (final) {
        // Still in flight at exit: its call is already streamed; it stays unknown in the parent.
        pending.delete(id);
      }
    }
  };
  const timer = setInterval(() => flush(false), 25);

  let stopping: Promise<void> | undefined;
  let holderStop = false;
  let holderLoop: Promise<void> = Promise.resolve();
  let holderClient: FenceLockClient | undefined;
  const stop = (abort: boolean): Promise<void> => {
    stopping ??= (async () => {
      holderStop = true;
      if (abort) await holderClient?.close();
      await Promise.all([workload.stop({ abort }), holderLoop]);
      clearInterval(timer);
      flush(true);
      emit({ k: 'end', stats: workload.stats() });
      // Let stdout drain before leaving.
      await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
      process.exit(0);
    })();
    return stopping;
  };

  process.on('SIGTERM', () => void stop(false));
  const rl = readline.createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    const [cmd, arg] = line.trim().split(/\s+/);
    if (cmd === 'ping') emit({ k: 'pong', seq: Number(arg), t: recorder.time() });
    else if (cmd === 'stop') void stop(false);
    else if (cmd === 'abort') void stop(true);
  });
  // The parent went away: stop at once (never outlive the run).
  rl.on('close', () => void stop(true));

  if (cfg.waiter) {
    const w = cfg.waiter;
    const client = new FenceLockClient({
      endpoints: cfg.workload.endpoints,
      clientId: `${prefix}waiter`,
      requestTimeoutMs: cfg.workload.requestTimeoutMs ?? 1_000,
      totalTimeoutMs: cfg.workload.totalTimeoutMs ?? 5_000,
    });
    holderClient = client;
    holderLoop = (async () => {
      const processName = `${workload.namespace}-waiter`;
      const session = (await recorder.open(processName, client, w.ttlMs)).value;
      if (!session) return emit({ k: 'waiter-done', outcome: 'no session' });
      emit({ k: 'session', id: session.id });
      const a = await recorder.acquire(processName, client, session, w.lock, w.waitMs);
      if (a.value) {
        await recorder.write(processName, client, session, w.lock, a.value.token, [{ key: `${w.lock}/k`, value: `${processName}#0` }]);
        if (!a.value.isReleased() && !session.isLost()) await recorder.release(processName, client, a.value);
      }
      emit({ k: 'waiter-done', outcome: a.op.outcome, error: a.op.error });
    })();
    emit({ k: 'ready', pid: process.pid, namespace: workload.namespace });
    return;
  }
  workload.start();
  if (cfg.holder) {
    holderClient = new FenceLockClient({
      endpoints: cfg.workload.endpoints,
      clientId: `${prefix}holder`,
      requestTimeoutMs: cfg.workload.requestTimeoutMs ?? 1_000,
      totalTimeoutMs: cfg.workload.totalTimeoutMs ?? 5_000,
    });
    holderLoop = runHolder(recorder, holderClient, `${workload.namespace}-holder`, workload.namespace, cfg.workload.hotLocks ?? 3, cfg.holder, () => holderStop);
  }
  emit({ k: 'ready', pid: process.pid, namespace: workload.namespace });
}

/** The slow holder: acquire -> announce -> sleep holdMs -> fenced write -> get -> release, until stopped. */
async function runHolder(
  rec: Recorder,
  client: FenceLockClient,
  processName: string,
  namespace: string,
  hotLocks: number,
  o: { holdMs: number; ttlMs: number; waitMs: number },
  stopped: () => boolean,
): Promise<void> {
  let session: Session | undefined;
  let n = 0;
  try {
    while (!stopped()) {
      if (session === undefined || session.isLost() || session.isClosed()) {
        session = (await rec.open(processName, client, o.ttlMs)).value;
        if (session === undefined) {
          await sleep(100);
          continue;
        }
      }
      const lock = `${namespace}/hot-${n % hotLocks}`;
      const a = await rec.acquire(processName, client, session, lock, o.waitMs);
      if (a.value === undefined) {
        if (a.op.outcome === 'unknown') session.abandon('acquire outcome unknown');
        await sleep(20);
        continue;
      }
      emit({ k: 'holding', lock, token: a.value.token });
      await sleep(o.holdMs);
      const value = `${processName}#${n++}`;
      await rec.write(processName, client, session, lock, a.value.token, [{ key: `${lock}/k`, value }]);
      await rec.get(processName, client, `${lock}/k`, lock);
      if (!a.value.isReleased() && !session.isLost()) {
        const r = await rec.release(processName, client, a.value);
        if (r.op.outcome === 'unknown') session.abandon('release outcome unknown');
      } else if (!session.isLost()) {
        session.abandon('lock released under us');
      }
    }
  } catch (err) {
    process.stderr.write(`holder: ${err instanceof Error ? err.message : String(err)}\n`);
  } finally {
    if (session !== undefined && !session.isClosed() && !session.isLost()) await rec.close(processName, client, session, 2_000);
    await client.close().catch(() => undefined);
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`clientWorker: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
