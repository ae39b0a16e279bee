// The Pipeline stream in process: the server side (pipelineService) with handlers the tests control, and the
// client side (PipelineLink) against it and against servers that end, break or never answer the stream.
import * as grpc from '@grpc/grpc-js';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { toFenceLockError } from '../../src/client/errors';
import { PipelineLink } from '../../src/client/pipeline';
import { GrpcTransport } from '../../src/client/grpcTransport';
import type { ClientPorts } from '../../src/client/ports';
import { realClock, realRandom, realTimers } from '../../src/client/realPorts';
import type { CallRequest } from '../../src/protocol/generated/fencelock/v1/CallRequest';
import type { CallResponse__Output } from '../../src/protocol/generated/fencelock/v1/CallResponse';
import { methods, pipelineRoute, serviceDefinition, SERVICE_NAMES, type PipelineCall } from '../../src/client/proto';
import { type CallScope, type Handler } from '../../src/node/api/context';
import { refusalError } from '../../src/node/api/refusals';
import { ApiError } from '../../src/node/api/errors';
import { CONNECTION_CAPS, ConnectionLimits } from '../../src/node/api/connectionLimits';
import { pipelineService, type PipelineCalls } from '../../src/node/api/pipelineService';
import { connectHttp2, RawGrpcCall } from '../support/rawHttp2';
import { startFakeCluster } from './fakeServer';

const logger = pino({ level: 'silent' });

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
  vi.restoreAllMocks();
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(5);
  }
}

/** The value of `read` once it stayed the same for `quietMs`; fails if it is still changing after `timeoutMs`. */
async function steady(read: () => number, quietMs: number, timeoutMs: number): Promise<number> {
  const end = Date.now() + timeoutMs;
  for (let last = read(); ; ) {
    await sleep(quietMs);
    const now = read();
    if (now === last) return now;
    if (Date.now() > end) throw new Error(`still changing after ${timeoutMs} ms (${last} -> ${now})`);
    last = now;
  }
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (err: unknown) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Settles to the rejection of p (as a grpc ServiceError), failing when p resolves. */
async function rejection(p: Promise<unknown>): Promise<grpc.ServiceError> {
  try {
    await p;
  } catch (err) {
    return err as grpc.ServiceError;
  }
  throw new Error('expected a rejection');
}

type Handlers = Record<PipelineCall, Handler<unknown, object>>;

const notScripted = (kind: string) => (): Promise<object> => Promise.reject(new ApiError(grpc.status.UNIMPLEMENTED, `${kind} not scripted in this test`));

/** The semaphore calls, which no test here scripts. */
const semaphoreDefaults = (): Pick<Handlers, 'semaphoreAcquire' | 'semaphoreRelease'> => ({
  semaphoreAcquire: notScripted('semaphoreAcquire'),
  semaphoreRelease: notScripted('semaphoreRelease'),
});

/** The scripted handlers as the Pipeline's declarations (scripts answer with partial messages, hence the cast). */
function handlers(overrides: Partial<Handlers>): PipelineCalls {
  const h: Handlers = { acquire: notScripted('acquire'), release: notScripted('release'), write: notScripted('write'), get: notScripted('get'), acquireAll: notScripted('acquireAll'), ...semaphoreDefaults(), ...overrides };
  const calls = {
    acquire: { name: 'Lock.Acquire', handle: h.acquire },
    release: { name: 'Lock.Release', handle: h.release },
    write: { name: 'KV.Write', handle: h.write },
    get: { name: 'KV.Get', handle: h.get },
    semaphoreAcquire: { name: 'Semaphore.Acquire', handle: h.semaphoreAcquire },
    semaphoreRelease: { name: 'Semaphore.Release', handle: h.semaphoreRelease },
    acquireAll: { name: 'Lock.AcquireAll', handle: h.acquireAll },
  };
  return calls as unknown as PipelineCalls;
}

/** A real gRPC server on 127.0.0.1 serving Pipeline.Calls with `impl`; stopped after the test. */
async function serve(impl: grpc.UntypedServiceImplementation): Promise<{ address: string; server: grpc.Server }> {
  const server = new grpc.Server();
  server.addService(serviceDefinition(SERVICE_NAMES.pipeline), impl);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  cleanups.push(() => server.forceShutdown());
  return { address: `127.0.0.1:${port}`, server };
}

function grpcClient(address: string): grpc.Client {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  cleanups.push(() => client.close());
  return client;
}

/** The real ports, with a gRPC transport of plaintext channels closed after the test. */
function realPortsFor(): ClientPorts {
  const transport = new GrpcTransport(grpc.credentials.createInsecure(), {});
  cleanups.push(() => transport.close());
  return { clock: realClock, timers: realTimers, random: realRandom, transport };
}

function link(address: string): PipelineLink {
  const l = new PipelineLink(address, methods().Pipeline.Calls, realPortsFor());
  cleanups.push(() => l.close());
  return l;
}

/**
 * A bare Pipeline.Calls stream that records every response, for tests that choose call ids themselves. Streams
 * share one connection (grpc-js pools them) unless `client` has a connection of its own.
 */
function rawStream(
  address: string,
  client = grpcClient(address),
): { stream: grpc.ClientDuplexStream<CallRequest, CallResponse__Output>; responses: CallResponse__Output[]; ended: () => boolean } {
  const m = methods().Pipeline.Calls;
  const stream = client.makeBidiStreamRequest(m.path, m.serialize, m.deserialize);
  const responses: CallResponse__Output[] = [];
  let ended = false;
  stream.on('data', (r: CallResponse__Output) => responses.push(r));
  stream.on('end', () => (ended = true));
  stream.on('error', () => (ended = true));
  cleanups.push(() => stream.cancel());
  return { stream, responses, ended: () => ended };
}

const getResult = (key: string): object => ({ found: true, value: Buffer.from(`value of ${key}`), token: '11', lock: 'l' });

describe('pipelineService: one stream, many calls', () => {
  it('answers each call under its call_id, in the order the handlers finish, with the request decoded', async () => {
    const acquired = deferred<object>();
    const seen: unknown[] = [];
    const { address } = await serve(
      pipelineService(
        logger,
        handlers({
          acquire: (req) => (seen.push(req), acquired.promise),
          get: async (req) => (seen.push(req), getResult((req as { key: string }).key)),
        }),
      ),
    );
    const l = link(address);
    const order: string[] = [];
    const acq = l.call(pipelineRoute('acquire'), { lock: 'a', sessionId: 's', waitTimeoutMs: '1000' }, 5_000).then((r) => (order.push('acquire'), r));
    const get = l.call(pipelineRoute('get'), { key: 'k', staleOk: true }, 5_000).then((r) => (order.push('get'), r));
    const g = await get;
    expect(g.found).toBe(true);
    expect(Buffer.from(g.value).toString()).toBe('value of k');
    expect(g.token).toBe('11');
    expect(order).toEqual(['get']); // the acquire sent first is still waiting
    acquired.resolve({ acquired: true, token: '7', holderSession: '' });
    expect(await acq).toMatchObject({ acquired: true, token: '7' });
    expect(order).toEqual(['get', 'acquire']);
    expect(seen).toEqual([
      expect.objectContaining({ lock: 'a', sessionId: 's', waitTimeoutMs: '1000' }),
      expect.objectContaining({ key: 'k', staleOk: true }),
    ]);
  });

  it('refuses calls past maxInFlight with RESOURCE_EXHAUSTED while the earlier ones still complete', async () => {
    const pending: Array<Deferred<object>> = [];
    const { address } = await serve(
      pipelineService(
        logger,
        handlers({
          get: () => {
            const d = deferred<object>();
            pending.push(d);
            return d.promise;
          },
        }),
        { maxInFlight: 2 },
      ),
    );
    const l = link(address);
    const settled: string[] = [];
    const first = l.call(pipelineRoute('get'), { key: 'a' }, 5_000).finally(() => settled.push('first'));
    const second = l.call(pipelineRoute('get'), { key: 'b' }, 5_000).finally(() => settled.push('second'));
    const third = rejection(l.call(pipelineRoute('get'), { key: 'c' }, 5_000));
    const err = await third;
    expect(grpc.status[err.code]).toBe('RESOURCE_EXHAUSTED');
    expect(err.details).toContain('more than 2 calls in flight');
    expect(pending).toHaveLength(2); // the refused call never reached the handler
    expect(settled).toEqual([]);
    pending[1]!.resolve(getResult('b'));
    pending[0]!.resolve(getResult('a'));
    expect(await first).toMatchObject({ found: true, token: '11' });
    expect(await second).toMatchObject({ found: true, token: '11' });
    // Answered calls leave the limit: the stream takes new calls again.
    const fourth = l.call(pipelineRoute('get'), { key: 'd' }, 5_000);
    await until(() => pending.length === 3);
    pending[2]!.resolve(getResult('d'));
    expect(await fourth).toMatchObject({ found: true });
  });

  it('counts answers the client has not read against the cap, and stops reading from a client whose answers back up', async () => {
    const CALLS = 10_000;
    let served = 0;
    // The first answers fill the client's HTTP/2 window (64 KiB): later ones wait unsent on the server.
    const get = async (): Promise<object> => ({ ...getResult('x'), value: Buffer.alloc(served++ < 2 ? 64 * 1024 : 8) });
    const { address } = await serve(pipelineService(logger, handlers({ get }), { maxInFlight: 8 }));
    const h2 = await connectHttp2(address);
    cleanups.push(() => h2.destroy());
    const m = methods().Pipeline.Calls;
    const call = new RawGrpcCall(h2, m.path);
    const key = 'k'.repeat(100); // ~115 bytes a request: some 600 fill the node's 64 KiB HTTP/2 window
    const sending = call.sendPaced(Array.from({ length: CALLS }, (_, i) => m.serialize({ callId: String(i + 1), get: { key } })), 1);
    await until(() => sending.taken() > 0);
    // Under load the node may take a while to reach the cap; it must then stop taking for good.
    const takenUnread = await steady(() => sending.taken(), 300, 15_000);
    await sleep(300);
    expect(sending.taken(), 'the node takes no more requests while the client reads nothing').toBe(takenUnread);
    expect(takenUnread).toBeLessThan(CALLS / 10);

    const responses: CallResponse__Output[] = [];
    call.read((bytes) => responses.push(m.deserialize(bytes)));
    await until(() => responses.length === CALLS, 60_000);
    const refused = responses.filter((r) => r.code === grpc.status.RESOURCE_EXHAUSTED);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]!.message).toMatch(/^more than 8 calls in flight on one stream \(0 waiting for their outcome, \d+ answered but not yet read by the client\)/);
    expect(responses.filter((r) => r.code === grpc.status.OK).length + refused.length).toBe(CALLS);
    call.finish();
    expect((await call.ended).status).toBe(grpc.status.OK);
  });

  it('caps calls in flight per connection over all its streams (ConnectionLimits); another connection has its own count', async () => {
    const pending: Array<Deferred<object>> = [];
    const limits = new ConnectionLimits({ ...CONNECTION_CAPS, 'Pipeline calls in flight': 3 });
    const get = (): Promise<object> => {
      const d = deferred<object>();
      pending.push(d);
      return d.promise;
    };
    const { address } = await serve(pipelineService(logger, handlers({ get }), { limits }));
    const a = rawStream(address);
    const b = rawStream(address);
    a.stream.write({ callId: '1', get: { key: 'x' } });
    a.stream.write({ callId: '2', get: { key: 'x' } });
    b.stream.write({ callId: '1', get: { key: 'x' } });
    await until(() => pending.length === 3);
    b.stream.write({ callId: '2', get: { key: 'x' } });
    await until(() => b.responses.length === 1);
    expect(b.responses[0]).toMatchObject({ callId: '2', code: grpc.status.RESOURCE_EXHAUSTED, metadata: { 'fencelock-reason': 'TOO_MANY_CALLS' } });
    expect(b.responses[0]!.message).toContain('already has 3 Pipeline calls in flight');
    expect(pending).toHaveLength(3); // the refused call never reached the handler

    const own = new grpc.Client(address, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
    cleanups.push(() => own.close());
    const c = rawStream(address, own);
    c.stream.write({ callId: '1', get: { key: 'x' } });
    await until(() => pending.length === 4);

    // An answered call is no longer counted; neither are the calls of a stream that went away.
    pending[0]!.resolve(getResult('x'));
    await until(() => a.responses.length === 1);
    b.stream.write({ callId: '3', get: { key: 'x' } });
    await until(() => pending.length === 5);
    a.stream.cancel(); // its call 2 no longer counts: b's next call fits
    await sleep(50);
    b.stream.write({ callId: '4', get: { key: 'x' } });
    await until(() => pending.length === 6);
    expect(b.responses).toHaveLength(1);
  });

  it("maps a handler's ApiError to its code, message and metadata; other errors to INTERNAL; the stream keeps serving", async () => {
    const { address } = await serve(
      pipelineService(
        logger,
        handlers({
          write: async () => {
            throw new ApiError(grpc.status.FAILED_PRECONDITION, 'STALE_TOKEN: a newer grant exists; current watermark 42', {
              'fencelock-reason': 'STALE_TOKEN',
              'fencelock-watermark': '42',
            });
          },
          acquire: async () => {
            throw new ApiError(grpc.status.UNAVAILABLE, 'not the leader; retry at 127.0.0.1:9', { 'fencelock-leader': '127.0.0.1:9' });
          },
          release: async () => {
            throw new Error('boom');
          },
          // Not async: throws before returning a promise.
          get: ((req: { key?: string }) => {
            if (!req.key) throw new ApiError(grpc.status.INVALID_ARGUMENT, 'key: must not be empty');
            return Promise.resolve(getResult(req.key));
          }) as Handler<unknown, object>,
        }),
      ),
    );
    const l = link(address);

    const stale = await rejection(l.call(pipelineRoute('write'), { lock: 'l', token: '5', ops: [] }, 5_000));
    expect(stale.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(stale.details).toBe('STALE_TOKEN: a newer grant exists; current watermark 42');
    expect(stale.metadata.get('fencelock-reason')).toEqual(['STALE_TOKEN']);
    expect(stale.metadata.get('fencelock-watermark')).toEqual(['42']);
    const mapped = toFenceLockError(stale, 'write');
    expect(mapped).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'STALE_TOKEN', watermark: 42n });

    const notLeader = toFenceLockError(await rejection(l.call(pipelineRoute('acquire'), { lock: 'l' }, 5_000)), 'acquire');
    expect(notLeader).toMatchObject({ code: 'UNAVAILABLE', leader: '127.0.0.1:9' });

    const internal = await rejection(l.call(pipelineRoute('release'), { lock: 'l' }, 5_000));
    expect(grpc.status[internal.code]).toBe('INTERNAL');
    expect(internal.details).toContain('boom');

    const invalid = await rejection(l.call(pipelineRoute('get'), { key: '' }, 5_000));
    expect(grpc.status[invalid.code]).toBe('INVALID_ARGUMENT');
    expect(invalid.details).toBe('key: must not be empty');

    expect(await l.call(pipelineRoute('get'), { key: 'still' }, 5_000)).toMatchObject({ found: true });
  });

  it('carries a WRONG_LOCK naming a non-ASCII key and lock: percent-encoded metadata (gRPC allows only ASCII), decoded by the client', async () => {
    const write = (): Promise<object> => Promise.reject(refusalError('WRONG_LOCK', 7, 'clé 100%', 'commandes/été'));
    const { address } = await serve(pipelineService(logger, handlers({ write })));
    const err = await rejection(link(address).call(pipelineRoute('write'), { lock: 'l', token: '5', ops: [] }, 5_000));
    expect(err.metadata.get('fencelock-key')).toEqual(['cl%C3%A9 100%25']);
    expect(err.metadata.get('fencelock-key-lock')).toEqual(['commandes/%C3%A9t%C3%A9']);
    expect(err.details).toBe(
      'WRONG_LOCK: wrong lock: key "clé 100%" belongs to lock "commandes/été" (for good: bound by its first write, also once deleted); ' +
        'write it under lock "commandes/été" or use another key; current watermark 7',
    );
    expect(toFenceLockError(err, 'write')).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'WRONG_LOCK', key: 'clé 100%', keyLock: 'commandes/été', watermark: 7n });
  });

  it('answers a request without a call INVALID_ARGUMENT, and a second call under an in-flight call_id too', async () => {
    const acquired = deferred<object>();
    const { address } = await serve(pipelineService(logger, handlers({ acquire: () => acquired.promise, get: async () => getResult('x') })));
    const { stream, responses } = rawStream(address);
    stream.write({ callId: '3' });
    await until(() => responses.length === 1);
    expect(responses[0]).toMatchObject({ callId: '3', code: grpc.status.INVALID_ARGUMENT });
    expect(responses[0]!.message).toContain('call');

    stream.write({ callId: '4', acquire: { lock: 'l' } });
    stream.write({ callId: '4', get: { key: 'x' } });
    await until(() => responses.length === 2);
    expect(responses[1]).toMatchObject({ callId: '4', code: grpc.status.INVALID_ARGUMENT });
    expect(responses[1]!.message).toContain('already in flight');
    // The first call under id 4 is unaffected, and answered once.
    acquired.resolve({ acquired: true, token: '9', holderSession: '' });
    await until(() => responses.length === 3);
    expect(responses[2]).toMatchObject({ callId: '4', code: grpc.status.OK, result: 'acquire', acquire: { acquired: true, token: '9' } });
    // Once answered, the id may be used again.
    stream.write({ callId: '4', get: { key: 'x' } });
    await until(() => responses.length === 4);
    expect(responses[3]).toMatchObject({ callId: '4', code: grpc.status.OK, result: 'get' });
  });

  it("answers DEADLINE_EXCEEDED at the call's timeout_ms, tells the handler, and never answers that call again", async () => {
    const late = deferred<object>();
    let cancelled = 0;
    const { address } = await serve(
      pipelineService(
        logger,
        handlers({
          acquire: (_req, scope: CallScope) => {
            scope.on('cancelled', () => cancelled++);
            return late.promise;
          },
          get: async () => getResult('after'),
        }),
      ),
    );
    const { stream, responses } = rawStream(address);
    const t0 = Date.now();
    stream.write({ callId: '1', timeoutMs: 150, acquire: { lock: 'l' } });
    await until(() => responses.length === 1);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    expect(responses[0]).toMatchObject({ callId: '1', code: grpc.status.DEADLINE_EXCEEDED });
    expect(cancelled).toBe(1);
    late.resolve({ acquired: true, token: '3', holderSession: '' }); // too late: dropped
    stream.write({ callId: '2', get: { key: 'after' } });
    await until(() => responses.length === 2);
    expect(responses.map((r) => r.callId)).toEqual(['1', '2']);
  });

  it('takes the largest timeout_ms (2^32 - 1) as a long deadline, not an immediate one', async () => {
    const { address } = await serve(pipelineService(logger, handlers({ get: async () => (await sleep(50), getResult('slow')) })));
    const { stream, responses } = rawStream(address);
    stream.write({ callId: '1', timeoutMs: 2 ** 32 - 1, get: { key: 'slow' } });
    await until(() => responses.length === 1);
    expect(responses[0]).toMatchObject({ callId: '1', code: grpc.status.OK, result: 'get' });
  });

  it("emits 'cancelled' on the scope of every call in flight when the client cancels the stream", async () => {
    const started: string[] = [];
    const cancelled: string[] = [];
    const hang = (name: string): Handler<unknown, object> => (_req, scope) => {
      started.push(name);
      scope.on('cancelled', () => cancelled.push(name));
      return new Promise<object>(() => undefined);
    };
    const { address } = await serve(pipelineService(logger, handlers({ acquire: hang('acquire'), write: hang('write'), get: async () => getResult('x') })));
    const { stream, responses } = rawStream(address);
    stream.write({ callId: '1', acquire: { lock: 'l' } });
    stream.write({ callId: '2', write: { lock: 'l' } });
    stream.write({ callId: '3', get: { key: 'x' } });
    await until(() => started.length === 2 && responses.length === 1);
    expect(cancelled).toEqual([]);
    stream.cancel();
    await until(() => cancelled.length === 2);
    expect(cancelled.sort()).toEqual(['acquire', 'write']); // the answered get is not told anything
  });

  it('PipelineLink.close() rejects its calls CANCELLED and the server cancels their handlers', async () => {
    const cancelled: string[] = [];
    let started = 0;
    const { address } = await serve(
      pipelineService(
        logger,
        handlers({
          acquire: (_req, scope) => {
            started++;
            scope.on('cancelled', () => cancelled.push('acquire'));
            return new Promise<object>(() => undefined);
          },
        }),
      ),
    );
    const l = new PipelineLink(address, methods().Pipeline.Calls, realPortsFor());
    const p = rejection(l.call(pipelineRoute('acquire'), { lock: 'l' }, 5_000));
    await until(() => started === 1);
    l.close();
    expect(grpc.status[(await p).code]).toBe('CANCELLED');
    await until(() => cancelled.length === 1);
  });

  it('after the client half-closes, answers the calls in flight and then ends the stream', async () => {
    const d = deferred<object>();
    const service = pipelineService(logger, handlers({ get: () => d.promise }));
    let halfClosed = false;
    const { address } = await serve({
      Calls: (stream: grpc.ServerDuplexStream<unknown, unknown>) => {
        stream.on('end', () => (halfClosed = true));
        (service.Calls as (s: grpc.ServerDuplexStream<unknown, unknown>) => void)(stream);
      },
    });
    const { stream, responses, ended } = rawStream(address);
    let status: grpc.StatusObject | undefined;
    stream.on('status', (s: grpc.StatusObject) => (status = s));
    stream.write({ callId: '1', get: { key: 'x' } });
    stream.end();
    await until(() => halfClosed); // the server has seen the half-close with the call still in flight
    expect(ended()).toBe(false);
    d.resolve(getResult('x'));
    await until(() => ended() && status !== undefined);
    expect(responses).toHaveLength(1);
    expect(responses[0]).toMatchObject({ callId: '1', code: grpc.status.OK });
    expect(status!.code).toBe(grpc.status.OK);
  });
});

describe('PipelineLink against servers that misbehave', () => {
  /** A Pipeline service whose behaviour per stream the test scripts: `onData(stream, req, streamNo)`. */
  function scripted(onData: (stream: grpc.ServerDuplexStream<{ callId: string; timeoutMs: number }, unknown>, req: { callId: string; timeoutMs: number }, streamNo: number) => void): {
    impl: grpc.UntypedServiceImplementation;
    streams: () => number;
    received: Array<{ callId: string; timeoutMs: number }>;
  } {
    let streams = 0;
    const received: Array<{ callId: string; timeoutMs: number }> = [];
    return {
      impl: {
        Calls: (stream: grpc.ServerDuplexStream<{ callId: string; timeoutMs: number }, unknown>) => {
          const no = ++streams;
          stream.on('data', (req: { callId: string; timeoutMs: number }) => {
            received.push(req);
            onData(stream, req, no);
          });
        },
      },
      streams: () => streams,
      received,
    };
  }

  const ok = (callId: string): object => ({ callId, code: 0, message: '', metadata: {}, get: getResult('k') });

  it('rejects the calls in flight UNAVAILABLE when the server ends the stream, then opens a new one', async () => {
    const s = scripted((stream, req, no) => {
      if (no === 1 && req.callId === '2') stream.end(); // first stream: take two calls, answer none, end (status OK)
      if (no === 2) stream.write(ok(req.callId));
    });
    const { address } = await serve(s.impl);
    const l = link(address);
    const a = rejection(l.call(pipelineRoute('get'), { key: 'a' }, 5_000));
    const b = rejection(l.call(pipelineRoute('get'), { key: 'b' }, 5_000));
    for (const err of [await a, await b]) {
      expect(grpc.status[err.code]).toBe('UNAVAILABLE');
      expect(err.details).toContain('ended by the server');
    }
    expect(await l.call(pipelineRoute('get'), { key: 'c' }, 5_000)).toMatchObject({ found: true });
    expect(s.streams()).toBe(2);
    expect(l.supported).toBe(true);
  });

  it('rejects the calls in flight UNAVAILABLE (not the server status) when the server breaks the stream', async () => {
    const s = scripted((stream, _req, no) => {
      if (no === 1) stream.emit('error', { code: grpc.status.INTERNAL, details: 'stream torn down' });
      else stream.write(ok(_req.callId));
    });
    const { address } = await serve(s.impl);
    const l = link(address);
    const err = await rejection(l.call(pipelineRoute('get'), { key: 'a' }, 5_000));
    expect(grpc.status[err.code]).toBe('UNAVAILABLE');
    expect(err.details).toContain('stream torn down');
    expect(await l.call(pipelineRoute('get'), { key: 'b' }, 5_000)).toMatchObject({ found: true });
  });

  it('passes on UNAUTHENTICATED and PERMISSION_DENIED of the stream (who the caller is, not the connection) with their metadata', async () => {
    const md = new grpc.Metadata();
    md.set('fencelock-reason', 'PERMISSION_DENIED');
    const s = scripted((stream, req, no) => {
      if (no === 1) stream.emit('error', { code: grpc.status.PERMISSION_DENIED, details: 'identity "bob" lacks lock on "k"', metadata: md });
      else stream.write(ok(req.callId));
    });
    const { address } = await serve(s.impl);
    const l = link(address);
    const err = await rejection(l.call(pipelineRoute('get'), { key: 'a' }, 5_000));
    expect(grpc.status[err.code]).toBe('PERMISSION_DENIED');
    expect(err.details).toBe('identity "bob" lacks lock on "k"');
    expect(err.metadata.get('fencelock-reason')).toEqual(['PERMISSION_DENIED']);
    expect(await l.call(pipelineRoute('get'), { key: 'b' }, 5_000)).toMatchObject({ found: true });
  });

  it('a stream refused over a stream cap or quota (RESOURCE_EXHAUSTED) fails its calls UNAVAILABLE and steps aside for unary calls', async () => {
    const md = new grpc.Metadata();
    md.set('fencelock-reason', 'QUOTA_EXCEEDED');
    const s = scripted((stream, req, no) => {
      if (no === 1) stream.emit('error', { code: grpc.status.RESOURCE_EXHAUSTED, details: 'quota pipeline_streams', metadata: md });
      else stream.write(ok(req.callId));
    });
    const { address } = await serve(s.impl);
    const l = link(address);
    expect(l.supported).toBe(true);
    const err = await rejection(l.call(pipelineRoute('get'), { key: 'a' }, 5_000));
    expect(grpc.status[err.code]).toBe('UNAVAILABLE');
    expect(err.details).toContain('quota pipeline_streams');
    // The router makes unary calls to this node meanwhile (they count against no stream quota).
    expect(l.supported).toBe(false);
  });

  it('rejects the calls in flight UNAVAILABLE when the server goes away', async () => {
    const s = scripted(() => undefined);
    const { address, server } = await serve(s.impl);
    const l = link(address);
    const p = rejection(l.call(pipelineRoute('get'), { key: 'a' }, 5_000));
    await until(() => s.received.length === 1);
    server.forceShutdown();
    expect(grpc.status[(await p).code]).toBe('UNAVAILABLE');
  });

  it('rejects DEADLINE_EXCEEDED when the server never answers within the timeout, which also travels as timeout_ms', async () => {
    const s = scripted(() => undefined);
    const { address } = await serve(s.impl);
    const l = link(address);
    const t0 = Date.now();
    const err = await rejection(l.call(pipelineRoute('get'), { key: 'a' }, 200));
    const took = Date.now() - t0;
    expect(grpc.status[err.code]).toBe('DEADLINE_EXCEEDED');
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(2_000);
    expect(s.received).toEqual([expect.objectContaining({ callId: '1', timeoutMs: 200 })]);
  });

  it('ignores a late answer to a call that timed out, and keeps matching the others', async () => {
    let stream: grpc.ServerDuplexStream<unknown, unknown> | undefined;
    const s = scripted((st) => (stream = st));
    const { address } = await serve(s.impl);
    const l = link(address);
    expect(grpc.status[(await rejection(l.call(pipelineRoute('get'), { key: 'a' }, 100))).code]).toBe('DEADLINE_EXCEEDED');
    const second = l.call(pipelineRoute('get'), { key: 'b' }, 5_000);
    await until(() => s.received.length === 2);
    stream!.write(ok('1')); // late: its caller gave up already
    stream!.write({ callId: '2', code: grpc.status.NOT_FOUND, message: 'no such thing', metadata: { 'fencelock-reason': 'UNKNOWN_SESSION' } });
    const err = await rejection(second);
    expect(grpc.status[err.code]).toBe('NOT_FOUND');
    expect(err.metadata.get('fencelock-reason')).toEqual(['UNKNOWN_SESSION']);
  });

  it('keeps a timeout beyond the range of timers and of uint32 as a long deadline, not an immediate one', async () => {
    const { address } = await serve(pipelineService(logger, handlers({ get: async () => (await sleep(100), getResult('slow')) })));
    const l = link(address);
    // 2^32 + 5 would be 5 ms on the wire, and a timer beyond 2^31 - 1 ms fires at once.
    expect(await l.call(pipelineRoute('get'), { key: 'slow' }, 2 ** 32 + 5)).toMatchObject({ found: true });
  });
});

describe('a server without the Pipeline service', () => {
  it('a PipelineLink fails its first call UNAVAILABLE (retryable) and marks itself unsupported', async () => {
    const { nodes, stop } = await startFakeCluster(1);
    cleanups.push(stop);
    const l = link(nodes[0]!.address);
    const err = await rejection(l.call(pipelineRoute('get'), { key: 'k' }, 2_000));
    expect(grpc.status[err.code]).toBe('UNAVAILABLE');
    expect(l.supported).toBe(false);
  });

  it('FenceLockClient (pipeline on by default) falls back to unary calls and works', async () => {
    const { state, nodes, stop } = await startFakeCluster(1);
    cleanups.push(stop);
    const spy = vi.spyOn(PipelineLink.prototype, 'call');
    const c = new FenceLockClient({ endpoints: [nodes[0]!.address], requestTimeoutMs: 500, totalTimeoutMs: 3_000, insecure: true });
    cleanups.push(() => c.close());
    const s = await c.openSession();
    const lock = await s.acquire('fallback');
    await lock.write([{ put: 'fallback/k', value: 'v' }]);
    const got = await c.get('fallback/k');
    expect(Buffer.from(got.value).toString()).toBe('v');
    expect(got.token).toBe(lock.token);
    await lock.release();
    // One try on the pipeline, then unary calls only, each applied once.
    expect(spy).toHaveBeenCalledTimes(1);
    expect((spy.mock.contexts[0] as PipelineLink).supported).toBe(false);
    for (const method of ['Acquire', 'Write', 'Get', 'Release']) expect(state.callsOf(method), method).toHaveLength(1);
    expect(state.locks.get('fallback')!.holder).toBeUndefined();
    await s.close();
  });

  it('falls back across a cluster of such servers, starting from followers, each call applied once', async () => {
    const { state, nodes, stop } = await startFakeCluster(3);
    cleanups.push(stop);
    const c = new FenceLockClient({ endpoints: [nodes[1]!.address, nodes[2]!.address, nodes[0]!.address], requestTimeoutMs: 500, totalTimeoutMs: 3_000, insecure: true });
    cleanups.push(() => c.close());
    const s = await c.openSession();
    const lock = await s.acquire('fallback3');
    await lock.write([{ put: 'fallback3/k', value: 'v' }]);
    await lock.release();
    expect(c.currentEndpoint()).toBe(nodes[0]!.address);
    for (const method of ['Acquire', 'Write', 'Release']) expect(state.callsOf(method).map((x) => x.node), method).toEqual(['n1']);
    expect(state.kv.get('fallback3/k')!.token).toBe(lock.token);
  });
});
