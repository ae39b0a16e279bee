// CPU per Pipeline call on the node, in process and without gRPC: pipelineService's own work for a call
// (admission, limits, deadline, scope, metrics, answer) around a handler that answers at once. What the
// per-call cuts of issue 32 are measured with; the figures are CPU µs per call, medians of the rounds.
//   node dist/scripts/bench-pipeline-calls.js [--calls 20000] [--rounds 7] [--batch 64]
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { Registry } from 'prom-client';
import { CONNECTION_CAPS, ConnectionLimits } from '../src/node/api/connectionLimits';
import { pipelineService, type PipelineCalls } from '../src/node/api/pipelineService';
import { ApiMetrics } from '../src/node/metrics/apiMetrics';
import { realPorts } from '../src/node/runtime/realPorts';

/** The part of a grpc-js ServerDuplexStream that pipelineService uses; answers are counted, not sent. */
class CountingStream extends EventEmitter {
  answered = 0;
  readonly writableLength = 0;
  getPeer = (): string => 'ipv4:127.0.0.1:50000';
  sendMetadata(): void {}
  isPaused = (): boolean => false;
  pause(): void {}
  resume(): void {}
  write(msg: { answers?: unknown[] }): boolean {
    this.answered += msg.answers?.length || 1;
    return true;
  }
  end(): void {}
}

const flag = (name: string, fallback: number): number => {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
};

const get = { name: 'KV.Get', handle: () => Promise.resolve({ found: false, value: Buffer.alloc(0), token: '0', lock: '' }) };

async function round(calls: number, batch: number): Promise<number> {
  const stream = new CountingStream();
  const service = pipelineService(pino({ level: 'silent' }), { get } as unknown as PipelineCalls, {
    limits: new ConnectionLimits(CONNECTION_CAPS, () => undefined),
    metrics: new ApiMetrics(new Registry(), () => performance.now()),
    identify: () => ({ identity: 'bench', via: 'token' }),
    timers: realPorts().timers,
  });
  (service.Calls as (s: unknown) => void)(stream);
  const started = process.cpuUsage();
  let next = 1;
  while (next <= calls) {
    // A batch's calls arrive in one turn, as the messages of one coalesced CallRequest do.
    for (let i = 0; i < batch && next <= calls; i++, next++) stream.emit('data', { callId: String(next), timeoutMs: 5_000, get: { key: 'k' }, calls: [] });
    while (stream.answered < next - 1) await new Promise((r) => setImmediate(r));
  }
  const used = process.cpuUsage(started);
  stream.emit('close');
  return (used.user + used.system) / calls;
}

async function main(): Promise<void> {
  const calls = flag('calls', 20_000);
  const batch = flag('batch', 64);
  const rounds = flag('rounds', 7);
  await round(calls, batch); // warm-up
  const perCall: number[] = [];
  for (let i = 0; i < rounds; i++) perCall.push(await round(calls, batch));
  perCall.sort((a, b) => a - b);
  const median = perCall[Math.floor(perCall.length / 2)] ?? NaN;
  console.log(`${calls} calls in batches of ${batch}, ${rounds} rounds: ${median.toFixed(2)} µs CPU per call (median; min ${perCall[0]?.toFixed(2)}, max ${perCall.at(-1)?.toFixed(2)})`);
}

void main();
