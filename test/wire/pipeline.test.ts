// Pipeline.Calls over the wire with generated edge values against a real TLS node with auth on: each request
// gets exactly one CallResponse echoing its call_id as the server decoded it, its result (or its refusal,
// naming the field) as the unary twin's, and never a server fault, for any call_id and timeout_ms.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_WAIT_TIMEOUT_MS } from '../../src/protocol/limits';
import {
  asDecoded, checkShape, expectAlive, expectOk, generator, header, intValid, MAX_SAFE, printSeedOnFailure, sendable, startCluster, wireInt,
  type Obj, type WireCluster,
} from './wireKit';

printSeedOnFailure();

let w: WireCluster;
beforeAll(async () => {
  w = await startCluster(1);
});
afterAll(async () => {
  await w?.stop();
});

/** One Pipeline stream; each call answered by the response echoing its call_id. */
class Calls {
  private readonly stream: grpc.ClientDuplexStream<Obj, Obj>;
  private readonly waiting = new Map<string, (res: Obj) => void>();

  constructor() {
    this.stream = w.leader.duplex('Pipeline', 'Calls');
    this.stream.on('data', (res: Obj) => this.waiting.get(res.callId as string)?.(res));
    this.stream.on('error', () => undefined);
  }

  call(req: Obj): Promise<Obj> {
    const callId = asDecoded('Pipeline', 'Calls', req).callId as string;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to call ${callId}`)), 10_000);
      this.waiting.set(callId, (res) => {
        clearTimeout(timer);
        this.waiting.delete(callId);
        checkShape('fencelock.v1.CallResponse', res, `CallResponse ${callId}`, ['callId']);
        expect(res.callId, 'call_id echoed as decoded').toBe(callId);
        expect([grpc.status.INTERNAL, grpc.status.UNKNOWN], `call ${callId}: ${res.code} ${res.message}`).not.toContain(res.code);
        if (res.code === grpc.status.OK) expect(res.message).toBe('');
        else expect(res.result, 'no result with a refusal').toBeUndefined();
        resolve(res);
      });
      this.stream.write(req);
    });
  }

  end(): void {
    this.stream.end();
    this.stream.cancel();
  }
}

describe('Pipeline.Calls', () => {
  it('echoes any call_id, takes any timeout_ms, and answers as the unary calls do', async () => {
    const gen = generator('pipeline');
    const sessionId = expectOk(await w.leader.unary('Session', 'Open', { header: header(gen), ttlMs: '60000' }), 'open', 'Session', 'Open').sessionId as string;
    const calls = new Calls();
    try {
      let highest = 0;
      const callIds = gen.intEdges({ min: 1, max: MAX_SAFE }).filter((id) => sendable('Pipeline', 'Calls', { callId: id }));
      const unique = [...new Map(callIds.map((id) => [asDecoded('Pipeline', 'Calls', { callId: id }).callId as string, id])).values()];
      const timeouts = gen.intEdges({ min: 0, max: 2 ** 32 - 1 });
      for (const [i, callId] of unique.entries()) {
        const timeoutMs = timeouts[i % timeouts.length]!;
        if (!sendable('Pipeline', 'Calls', { callId, timeoutMs })) continue;
        const decodedTimeout = asDecoded('Pipeline', 'Calls', { callId, timeoutMs }).timeoutMs as number;
        // A deadline of a few ms may pass before the call is done: then DEADLINE_EXCEEDED, as a unary call's.
        const short = decodedTimeout > 0 && decodedTimeout < 1_000;
        const lock = gen.name('piped');
        const what = `call_id ${JSON.stringify(callId)}, timeout_ms ${JSON.stringify(timeoutMs)} (${decodedTimeout})`;
        const acq = await calls.call({ callId, timeoutMs, acquire: { header: header(gen), lock, sessionId, waitTimeoutMs: '0' } });
        if (short && acq.code === grpc.status.DEADLINE_EXCEEDED) continue;
        expect(acq.code, `${what}: ${acq.message}`).toBe(grpc.status.OK);
        expect(acq.result).toBe('acquire');
        expect(acq.acquire.acquired).toBe(true);
        const token = wireInt(`${what}: token`, acq.acquire.token, { min: highest + 1, max: MAX_SAFE });
        highest = token;
        const written = await calls.call({ callId, write: { header: header(gen), lock, sessionId, token: String(token), ops: [{ type: 'PUT', key: lock, value: Buffer.from('x') }] } });
        expect(written.code, written.message).toBe(grpc.status.OK);
        highest = wireInt('write index', written.write.index, { min: token + 1, max: MAX_SAFE });
        const got = await calls.call({ callId, get: { key: lock } });
        expect(got.get).toEqual({ found: true, value: Buffer.from('x'), token: String(token), lock, deleted: false, semaphore: false, slot: 0 });
        const released = await calls.call({ callId, release: { header: header(gen), lock, sessionId, token: String(token) } });
        expect(released.release).toEqual({ nextHolderSession: '', nextToken: '0' });
      }
    } finally {
      calls.end();
    }
    await expectAlive(w);
  });

  it('refuses bad fields of each call naming them, on the stream, which goes on', async () => {
    const gen = generator('pipeline refusals');
    const sessionId = expectOk(await w.leader.unary('Session', 'Open', { header: header(gen), ttlMs: '60000' }), 'open', 'Session', 'Open').sessionId as string;
    const calls = new Calls();
    try {
      let id = 0;
      const refusedNaming = async (req: Obj, field: string): Promise<void> => {
        const res = await calls.call({ callId: String(++id), ...req });
        expect(res.code, `${field}: ${res.message}`).toBe(grpc.status.INVALID_ARGUMENT);
        expect(res.message).toContain(field);
      };
      await refusedNaming({}, 'call');
      for (const waitTimeoutMs of gen.intEdges({ min: 0, max: MAX_WAIT_TIMEOUT_MS })) {
        const req = { acquire: { header: header(gen), lock: gen.name('p'), sessionId, waitTimeoutMs } };
        if (!sendable('Pipeline', 'Calls', req)) continue;
        const decoded = asDecoded('Pipeline', 'Calls', req).acquire.waitTimeoutMs as string;
        if (intValid(decoded, { min: 0, max: MAX_WAIT_TIMEOUT_MS })) continue;
        await refusedNaming(req, 'wait_timeout_ms');
      }
      await refusedNaming({ acquire: { header: header(gen), lock: '', sessionId } }, 'lock');
      await refusedNaming({ acquire: { header: header(gen), lock: 'x', sessionId: 'nope' } }, 'session_id');
      await refusedNaming({ release: { header: header(gen), lock: 'x', sessionId, token: '0' } }, 'token');
      await refusedNaming({ release: { header: header(gen), lock: 'x', sessionId, token: String(2 ** 53) } }, 'token');
      await refusedNaming({ write: { header: header(gen), lock: 'x', sessionId, token: '1', ops: [] } }, 'ops');
      await refusedNaming({ get: { key: 'k'.repeat(513) } }, 'key');
      await refusedNaming({ get: { key: '' } }, 'key');
      await refusedNaming({ acquire: { lock: 'x', sessionId } }, 'header');
      const fine = await calls.call({ callId: String(++id), get: { key: gen.name('after') } });
      expect(fine.code, 'the stream still serves').toBe(grpc.status.OK);
    } finally {
      calls.end();
    }
    await expectAlive(w);
  });
});
