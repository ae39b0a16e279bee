// Coalesced Pipeline calls in process: the client (PipelineLink) sends the calls of one turn as one message
// only to a node that advertised batches, within the batch bound; each call keeps its own outcome; a client
// that sends one call per message (an older one) gets one answer per message.
import * as grpc from '@grpc/grpc-js';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { GrpcTransport } from '../../src/client/grpcTransport';
import { PipelineLink } from '../../src/client/pipeline';
import { methods, pipelineRoute, serviceDefinition, SERVICE_NAMES } from '../../src/client/proto';
import { realClock, realRandom, realTimers } from '../../src/client/realPorts';
import { ApiError, reasonMetadata } from '../../src/node/api/errors';
import { pipelineService, type PipelineCalls } from '../../src/node/api/pipelineService';
import { strictDeserializer } from '../../src/node/api/strictService';
import type { CallRequest__Output } from '../../src/protocol/generated/fencelock/v1/CallRequest';
import type { CallResponse, CallResponse__Output } from '../../src/protocol/generated/fencelock/v1/CallResponse';
import { MAX_CALLS_PER_BATCH } from '../../src/protocol/limits';

const logger = pino({ level: 'silent' });
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const definition = serviceDefinition(SERVICE_NAMES.pipeline);
const decodeCall = strictDeserializer(definition.Calls as grpc.MethodDefinition<unknown, unknown>);

/** Get answers with the key as its value; a key starting with `refuse` fails FAILED_PRECONDITION STALE_TOKEN. */
const gets = {
  get: {
    name: 'KV.Get',
    handle: async (req: { key: string }) => {
      if (req.key.startsWith('refuse')) throw new ApiError(grpc.status.FAILED_PRECONDITION, `refused ${req.key}`, reasonMetadata('STALE_TOKEN'));
      return { found: true, value: Buffer.from(req.key), token: '1', lock: 'l' };
    },
  },
} as unknown as PipelineCalls;

/** A real server on 127.0.0.1 serving Pipeline.Calls; records each message received and sent. */
async function serve(takesBatches: boolean): Promise<{ address: string; received: CallRequest__Output[]; sent: CallResponse[] }> {
  const received: CallRequest__Output[] = [];
  const sent: CallResponse[] = [];
  const inner = pipelineService(logger, gets, takesBatches ? { decodeCall } : {});
  const server = new grpc.Server();
  server.addService(definition, {
    Calls: (stream: grpc.ServerDuplexStream<CallRequest__Output, CallResponse>) => {
      stream.on('data', (req: CallRequest__Output) => received.push(req));
      const write = stream.write.bind(stream) as (m: CallResponse) => boolean;
      stream.write = ((m: CallResponse) => (sent.push(m), write(m))) as typeof stream.write;
      (inner.Calls as (s: typeof stream) => void)(stream);
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  cleanups.push(() => server.forceShutdown());
  return { address: `127.0.0.1:${port}`, received, sent };
}

function link(address: string): PipelineLink {
  const transport = new GrpcTransport(grpc.credentials.createInsecure(), {});
  const l = new PipelineLink(address, methods().Pipeline.Calls, { clock: realClock, timers: realTimers, random: realRandom, transport });
  cleanups.push(() => transport.close());
  cleanups.push(() => l.close());
  return l;
}

const route = pipelineRoute('get');
const get = (l: PipelineLink, key: string): Promise<unknown> => l.call(route, { key }, 10_000);
const valueOf = (res: unknown): string => (res as { value: Buffer }).value.toString();

describe('Pipeline batches from the client', () => {
  it('sends the calls of one turn as one message to a node that takes batches; each call keeps its own outcome', async () => {
    const node = await serve(true);
    const l = link(node.address);
    expect(valueOf(await get(l, 'first'))).toBe('first'); // alone: the node's header was not seen yet
    expect(node.received[0]!.calls).toEqual([]);
    const outcomes = await Promise.allSettled(['a', 'refuse-b', 'c'].map((k) => get(l, k)));
    expect(node.received.slice(1).map((m) => m.calls.length)).toEqual([3]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? valueOf(o.value) : (o.reason as grpc.ServiceError).code))).toEqual([
      'a',
      grpc.status.FAILED_PRECONDITION,
      'c',
    ]);
    const refused = (outcomes[1] as PromiseRejectedResult).reason as grpc.ServiceError;
    expect(refused.metadata.get('fencelock-reason')).toEqual(['STALE_TOKEN']);
    expect(node.sent.slice(1).map((m) => m.answers?.length ?? 0), 'answered as one message').toEqual([3]);
  });

  it(`sends at most ${MAX_CALLS_PER_BATCH} calls in one message`, async () => {
    const node = await serve(true);
    const l = link(node.address);
    await get(l, 'first');
    const keys = Array.from({ length: 2 * MAX_CALLS_PER_BATCH + 2 }, (_, i) => `k${i}`);
    expect((await Promise.all(keys.map((k) => get(l, k)))).map(valueOf)).toEqual(keys);
    expect(node.received.slice(1).map((m) => m.calls.length)).toEqual([MAX_CALLS_PER_BATCH, MAX_CALLS_PER_BATCH, 2]);
    expect(node.sent.slice(1).every((m) => (m.answers?.length ?? 1) <= MAX_CALLS_PER_BATCH)).toBe(true);
  });

  it('sends one call per message to a node that does not advertise batches (an older node)', async () => {
    const node = await serve(false);
    const l = link(node.address);
    await get(l, 'first');
    const keys = ['a', 'b', 'c'];
    expect((await Promise.all(keys.map((k) => get(l, k)))).map(valueOf)).toEqual(keys);
    expect(node.received.map((m) => [m.callId !== '0', m.calls.length])).toEqual(Array(4).fill([true, 0]));
  });

  it('answers a client that sends one call per message (an older client) one answer per message', async () => {
    const node = await serve(true);
    const client = new grpc.Client(node.address, grpc.credentials.createInsecure());
    cleanups.push(() => client.close());
    const m = methods().Pipeline.Calls;
    const stream = client.makeBidiStreamRequest(m.path, m.serialize, m.deserialize);
    cleanups.push(() => stream.cancel());
    const answers: CallResponse__Output[] = [];
    stream.on('data', (r: CallResponse__Output) => answers.push(r));
    stream.on('error', () => undefined); // the cancel at cleanup
    for (const id of ['1', '2', '3']) stream.write({ callId: id, get: { key: `k${id}` } });
    const end = Date.now() + 5_000;
    while (answers.length < 3 && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    expect(answers.map((a) => [a.callId, a.answers.length])).toEqual([['1', 0], ['2', 0], ['3', 0]]);
    expect(node.sent.every((s) => s.answers === undefined)).toBe(true);
  });
});
