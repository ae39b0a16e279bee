// Coalesced Pipeline calls against a real TLS node with auth on: the node advertises batches in the stream's
// response headers; a batch mixing an OK call, a stale token, a call its identity may not make, one over a
// quota, one past its deadline and one that cannot be decoded answers each call as if it had come alone
// (its own status, message and metadata), and the calls applied together are answered in one message.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protoFile } from '../../src/codec/protoPath';
import { MAX_CALLS_PER_BATCH, PIPELINE_BATCH_HEADER } from '../../src/protocol/limits';
import { expectOk, generator, header, LOADER_OPTIONS, printSeedOnFailure, startCluster, WireClient, type Obj, type WireCluster } from './wireKit';
import { testCredentials } from '../integration/harness';

printSeedOnFailure();

const pipeline = protoLoader.loadSync(protoFile('fencelock/v1/lock.proto'), LOADER_OPTIONS)['fencelock.v1.Pipeline'] as protoLoader.ServiceDefinition;
const encodeCall = (call: Obj): Buffer => pipeline.Calls!.requestSerialize(call);

let w: WireCluster;
beforeAll(async () => {
  w = await startCluster(1);
});
afterAll(async () => {
  await w?.stop();
});

/** A user who may lock and write under `mine/` only, and may hold one lock at a time; a client as that user. */
async function limitedUser(): Promise<WireClient> {
  const gen = generator('batch user');
  const change = async (method: string, req: Obj): Promise<void> => {
    expectOk(await w.leader.unary('Auth', method, { header: header(gen), ...req }), method, 'Auth', method);
  };
  await change('RoleAdd', { role: 'batcher' });
  await change('RoleGrantPermission', { role: 'batcher', rule: { permission: 'LOCK', prefix: 'mine/' } });
  await change('RoleGrantPermission', { role: 'batcher', rule: { permission: 'WRITE', prefix: 'mine/' } });
  await change('RoleSetQuota', { role: 'batcher', name: 'locks', value: '1' });
  await change('UserAdd', { user: 'batcher' });
  await change('UserGrantRole', { user: 'batcher', role: 'batcher' });
  const issued = expectOk(await w.leader.unary('Auth', 'TokenIssue', { header: header(gen), user: 'batcher' }), 'token', 'Auth', 'TokenIssue');
  return new WireClient(w.leader.address, testCredentials(), issued.token as string);
}

/** One Pipeline stream: every message received (answers unpacked by the test), and the response headers. */
class RawStream {
  readonly messages: Obj[] = [];
  readonly headers: Promise<grpc.Metadata>;
  private readonly stream: grpc.ClientDuplexStream<Obj, Obj>;
  private waiters: Array<() => void> = [];

  constructor(client: WireClient) {
    this.stream = client.duplex('Pipeline', 'Calls');
    this.headers = new Promise((resolve) => this.stream.once('metadata', resolve));
    this.stream.on('data', (msg: Obj) => {
      this.messages.push(msg);
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.stream.on('error', () => undefined);
  }

  write(msg: Obj): void {
    this.stream.write(msg);
  }

  /** Every answer so far, by call_id, each exactly once. */
  answers(): Map<string, Obj> {
    const out = new Map<string, Obj>();
    for (const msg of this.messages) {
      for (const a of (msg.answers as Obj[]).length > 0 ? (msg.answers as Obj[]) : [msg]) {
        expect(out.has(a.callId as string), `call ${a.callId} answered once`).toBe(false);
        expect(a.answers, 'an answer in a batch is not a batch').toEqual([]);
        out.set(a.callId as string, a);
      }
    }
    return out;
  }

  async answered(callIds: string[]): Promise<Map<string, Obj>> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const answers = this.answers();
      if (callIds.every((id) => answers.has(id))) return answers;
      if (Date.now() > deadline) throw new Error(`calls ${callIds.filter((id) => !answers.has(id)).join(', ')} unanswered`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  end(): void {
    this.stream.end();
    this.stream.cancel();
  }
}

const reason = (answer: Obj): string | undefined => (answer.metadata as Record<string, string>)['fencelock-reason'];

describe('Pipeline batches', () => {
  it('answers each call of one batch as if it came alone: OK, stale, denied, over quota, past its deadline, undecodable', async () => {
    const gen = generator('pipeline batch');
    const user = await limitedUser();
    const raw = new RawStream(user);
    try {
      expect((await raw.headers).get(PIPELINE_BATCH_HEADER)).toEqual([String(MAX_CALLS_PER_BATCH)]);
      const open = async (): Promise<string> =>
        expectOk(await user.unary('Session', 'Open', { header: header(gen), ttlMs: '60000' }), 'open', 'Session', 'Open').sessionId as string;
      const [session, other] = [await open(), await open()];
      const acquire = async (callId: string): Promise<string> => {
        raw.write({ callId, acquire: { header: header(gen), lock: 'mine/a', sessionId: session } });
        const res = (await raw.answered([callId])).get(callId)!;
        expect(res.code, res.message).toBe(grpc.status.OK);
        return res.acquire.token as string;
      };
      const stale = await acquire('1');
      raw.write({ callId: '2', release: { header: header(gen), lock: 'mine/a', sessionId: session, token: stale } });
      expect((await raw.answered(['2'])).get('2')!.code).toBe(grpc.status.OK);
      const current = await acquire('3'); // the user's one lock: its quota is full

      const write = (token: string): Obj => ({ header: header(gen), lock: 'mine/a', sessionId: session, token, ops: [{ type: 'PUT', key: 'mine/k', value: Buffer.from('v') }] });
      // A call whose lock is not UTF-8: its bytes are patched after encoding, so only the node's decoding refuses it.
      const undecodable = encodeCall({ callId: '15', acquire: { header: header(gen), lock: 'mine/\u00e9', sessionId: session } });
      undecodable[undecodable.indexOf(0xc3)] = 0xff;
      raw.write({
        calls: [
          encodeCall({ callId: '10', write: write(current) }),
          encodeCall({ callId: '11', write: write(stale) }),
          encodeCall({ callId: '12', acquire: { header: header(gen), lock: 'theirs/a', sessionId: session } }),
          encodeCall({ callId: '13', acquire: { header: header(gen), lock: 'mine/b', sessionId: session } }),
          encodeCall({ callId: '14', timeoutMs: 300, acquire: { header: header(gen), lock: 'mine/a', sessionId: other, waitTimeoutMs: '60000' } }),
          undecodable,
        ],
      });
      const answers = await raw.answered(['10', '11', '12', '13', '14', '15']);
      const [ok, refused, denied, overQuota, late, bad] = ['10', '11', '12', '13', '14', '15'].map((id) => answers.get(id)!);
      expect(ok.code, ok.message).toBe(grpc.status.OK);
      expect(Number(ok.write.index)).toBeGreaterThan(Number(current));
      expect([refused.code, reason(refused)], refused.message).toEqual([grpc.status.FAILED_PRECONDITION, 'STALE_TOKEN']);
      expect([denied.code, reason(denied)], denied.message).toEqual([grpc.status.PERMISSION_DENIED, 'PERMISSION_DENIED']);
      expect([overQuota.code, reason(overQuota)], overQuota.message).toEqual([grpc.status.RESOURCE_EXHAUSTED, 'QUOTA_EXCEEDED']);
      expect((overQuota.metadata as Record<string, string>)['fencelock-quota']).toBe('locks');
      expect(late.code, late.message).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(bad.code, bad.message).toBe(grpc.status.INVALID_ARGUMENT);
      expect(bad.message).toContain('lock');
      // The three proposals of the batch were one Raft append, applied together: answered in one message.
      const together = raw.messages.find((m) => (m.answers as Obj[]).some((a) => a.callId === '10'));
      expect(together?.answers.map((a: Obj) => a.callId).sort()).toEqual(expect.arrayContaining(['10', '11', '13']));

      // The stream goes on, and the lock the late call waited for is still the user's.
      raw.write({ calls: [encodeCall({ callId: '20', release: { header: header(gen), lock: 'mine/a', sessionId: session, token: current } })] });
      expect((await raw.answered(['20'])).get('20')!.code).toBe(grpc.status.OK);
    } finally {
      raw.end();
      user.close();
    }
  });

  it('refuses, per call, a batch inside a batch and a batch with a call of its own', async () => {
    const raw = new RawStream(w.leader);
    try {
      await raw.headers;
      raw.write({ calls: [encodeCall({ callId: '1', calls: [encodeCall({ callId: '2', get: { key: 'k' } })] }), encodeCall({ callId: '3', get: { key: 'k' } })] });
      raw.write({ callId: '4', get: { key: 'k' }, calls: [encodeCall({ callId: '5', get: { key: 'k' } })] });
      const answers = await raw.answered(['1', '3', '4']);
      expect(answers.get('1')!.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(answers.get('3')!.code, answers.get('3')!.message).toBe(grpc.status.OK);
      expect(answers.get('4')!.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(answers.has('2') || answers.has('5'), 'no call of a refused batch runs').toBe(false);
    } finally {
      raw.end();
    }
  });
});
