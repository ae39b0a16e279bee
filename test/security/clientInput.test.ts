// Input from clients over real connections: hand-built protobuf bytes sent with identity serializers, so the
// test says exactly which bytes reach the node. Names, keys, client ids and session ids that are not UTF-8
// are refused with INVALID_ARGUMENT naming the field (never mapped to U+FFFD), a truncated or garbled
// request is INVALID_ARGUMENT rather than INTERNAL, nothing a refused request carried is applied, and a
// message over the client listener's limit is RESOURCE_EXHAUSTED.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import * as protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protoFile } from '../../src/codec/protoPath';
import { CLIENT_SERVER_OPTIONS, MAX_CLIENT_MESSAGE_BYTES, MAX_LEGAL_REQUEST_BYTES } from '../../src/node/api/serverOptions';
import { firstInvalidUtf8 } from '../../src/node/api/strictDecode';
import { strictService } from '../../src/node/api/strictService';
import * as L from '../../src/state/limits';
import { mulberry32 } from '../support/prng';
import { eventually, LocalCluster, testCredentials } from '../integration/harness';
import { header, rawClient, type RawNodeClient } from '../integration/rawClient';

// ---- protobuf by hand ----------------------------------------------------------------------------------

function varint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return out;
}
const bytesOf = (v: string | Uint8Array | number[]): Buffer => (typeof v === 'string' ? Buffer.from(v, 'utf8') : Buffer.from(v));
/** A length-delimited field (string, bytes or embedded message). */
const ld = (id: number, v: string | Uint8Array | number[]): Buffer => {
  const body = bytesOf(v);
  return Buffer.concat([Buffer.from([...varint((id << 3) | 2), ...varint(body.length)]), body]);
};
const uint = (id: number, n: number): Buffer => Buffer.from([...varint(id << 3), ...varint(n)]);
const msg = (...parts: Buffer[]): Buffer => Buffer.concat(parts);

let requestId = 1_000_000;
/** A request header: by default a client id of its own at request 1 (an unknown client id must start at 1). */
const hdr = (clientId?: string | number[]): Buffer => ld(1, msg(ld(1, clientId ?? `sec-client-${requestId++}`), uint(2, clientId === undefined ? 1 : requestId++)));

// ---- a raw client with identity serializers -------------------------------------------------------------

const identity = (b: Buffer): Buffer => b;

function rawUnary(client: grpc.Client, path: string, body: Buffer): Promise<{ err?: grpc.ServiceError; res?: Buffer }> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(path, identity, identity, body, { deadline: Date.now() + 10_000 }, (err, res) =>
      resolve(err ? { err } : { res: res as Buffer }),
    );
  });
}

async function refused(client: grpc.Client, path: string, body: Buffer): Promise<grpc.ServiceError> {
  const { err } = await rawUnary(client, path, body);
  if (!err) throw new Error(`${path} was accepted`);
  return err;
}

const proto = protobuf.loadSync(protoFile('fencelock/v1/lock.proto'));
const CallResponse = proto.lookupType('fencelock.v1.CallResponse');

// ---- a one-node cluster ---------------------------------------------------------------------------------

let cluster: LocalCluster;
let address: string;
let raw: RawNodeClient;
let bytesClient: grpc.Client;
let sessionId: string;

beforeAll(async () => {
  cluster = await LocalCluster.create({ size: 1 });
  cluster.startAll();
  address = cluster.endpoints[0];
  raw = rawClient(address);
  bytesClient = new grpc.Client(address, testCredentials());
  await eventually(async () => (await raw.call('Cluster', 'Status', {})).role === 'leader', 30_000, 'a leader');
  sessionId = (await raw.call('Session', 'Open', { header: header('sec-owner'), ttlMs: '60000' })).sessionId as string;
});

afterAll(async () => {
  raw?.close();
  bytesClient?.close();
  await cluster?.destroy();
});

const describeLock = (lock: string): Promise<Record<string, unknown>> => raw.call('Lock', 'Describe', { lock });

// Three of the byte strings that a lenient decoder turns into the same name "a\uFFFD", and two more
// ill-formed sequences (an overlong encoding, an encoded surrogate).
const BAD_NAMES: Array<[string, number[]]> = [
  ['a\\xff', [0x61, 0xff]],
  ['a\\xfe', [0x61, 0xfe]],
  ['a\\x80 (lone continuation byte)', [0x61, 0x80]],
  ['a\\xc0\\x80 (overlong NUL)', [0x61, 0xc0, 0x80]],
  ['a\\xed\\xa0\\x80 (UTF-8 of a surrogate)', [0x61, 0xed, 0xa0, 0x80]],
  ['a\\xe2\\x82 (cut inside a character)', [0x61, 0xe2, 0x82]],
];

describe('names and keys are UTF-8, strictly', () => {
  it.each(BAD_NAMES)('Acquire with lock name %s: INVALID_ARGUMENT naming lock, and no lock is created', async (_label, name) => {
    const err = await refused(bytesClient, '/fencelock.v1.Lock/Acquire', msg(hdr(), ld(2, name), ld(3, sessionId)));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/^lock: is not valid UTF-8 \(byte 1 of \d+, 0x[0-9a-f]{2}, starts no valid character\); send the text as UTF-8/);
    const d = await describeLock('a\uFFFD');
    expect(d.held).toBe(false);
    expect(d.latestToken).toBe('0');
  });

  it('the real U+FFFD (bytes ef bf bd) is a name like any other', async () => {
    const { res, err } = await rawUnary(bytesClient, '/fencelock.v1.Lock/Acquire', msg(hdr(), ld(2, [0x61, 0xef, 0xbf, 0xbd]), ld(3, sessionId)));
    expect(err).toBeUndefined();
    expect(res!.length).toBeGreaterThan(0);
    expect((await describeLock('a\uFFFD')).held).toBe(true);
  });

  it('Write with a key that is not UTF-8: INVALID_ARGUMENT naming ops[1].key, and no op of the write applies', async () => {
    const acquired = await raw.call('Lock', 'Acquire', { header: header('sec-owner'), lock: 'sec-kv', sessionId });
    const token = Number(acquired.token);
    const put = (key: string | number[]): Buffer => ld(5, msg(uint(1, 1), ld(2, key), ld(3, 'v')));
    const body = msg(hdr(), ld(2, 'sec-kv'), uint(3, token), ld(4, sessionId), put('sec-k0'), put([0x6b, 0xff]), put('sec-k2'));
    const err = await refused(bytesClient, '/fencelock.v1.KV/Write', body);
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/^ops\[1\]\.key: is not valid UTF-8/);
    for (const key of ['sec-k0', 'k\uFFFD', 'sec-k2']) expect((await raw.call('KV', 'Get', { key })).found).toBe(false);
    // The same write with a valid key goes through: the refusal was about the bytes only.
    const ok = await rawUnary(bytesClient, '/fencelock.v1.KV/Write', msg(hdr(), ld(2, 'sec-kv'), uint(3, token), ld(4, sessionId), put('sec-k0'), put('k\uFFFD')));
    expect(ok.err).toBeUndefined();
    expect((await raw.call('KV', 'Get', { key: 'k\uFFFD' })).found).toBe(true);
  });

  it('Get and Describe with a key or name that is not UTF-8: INVALID_ARGUMENT naming the field', async () => {
    const get = await refused(bytesClient, '/fencelock.v1.KV/Get', ld(1, [0xff, 0xfe]));
    expect(get.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(get.details).toMatch(/^key: is not valid UTF-8 \(byte 0 of 2, 0xff,/);
    const d = await refused(bytesClient, '/fencelock.v1.Lock/Describe', ld(1, [0x78, 0xc3]));
    expect(d.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(d.details).toMatch(/^lock: is not valid UTF-8/);
  });

  it('header.client_id that is not UTF-8: INVALID_ARGUMENT naming header.client_id, nothing created', async () => {
    const err = await refused(bytesClient, '/fencelock.v1.Lock/Acquire', msg(hdr([0x63, 0xff]), ld(2, 'sec-cid'), ld(3, sessionId)));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/^header\.client_id: is not valid UTF-8/);
    expect((await describeLock('sec-cid')).latestToken).toBe('0');
  });

  it('session_id that is not UTF-8: INVALID_ARGUMENT naming session_id, and the session lives on', async () => {
    const badId = Buffer.from(sessionId, 'utf8');
    badId[5] = 0xff;
    const close = await refused(bytesClient, '/fencelock.v1.Session/Close', msg(hdr(), ld(2, badId)));
    expect(close.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(close.details).toMatch(/^session_id: is not valid UTF-8 \(byte 5 of 32, 0xff,/);
    const acq = await refused(bytesClient, '/fencelock.v1.Lock/Acquire', msg(hdr(), ld(2, 'sec-sid'), ld(3, badId)));
    expect(acq.details).toMatch(/^session_id: is not valid UTF-8/);
    expect((await describeLock('sec-sid')).latestToken).toBe('0');
    const res = await raw.call('Lock', 'Acquire', { header: header('sec-owner'), lock: 'sec-sid', sessionId });
    expect(res.acquired).toBe(true);
  });

  it('KeepAlive with a session_id that is not UTF-8 ends the stream with INVALID_ARGUMENT naming session_id', async () => {
    const stream = bytesClient.makeBidiStreamRequest('/fencelock.v1.Session/KeepAlive', identity, identity);
    const status = new Promise<grpc.StatusObject>((resolve) => stream.on('status', resolve));
    stream.on('data', () => undefined);
    stream.on('error', () => undefined);
    stream.write(ld(1, [0x61, 0xff]));
    const s = await status;
    expect(s.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(s.details).toMatch(/^session_id: is not valid UTF-8/);
  });
});

describe('undecodable requests are INVALID_ARGUMENT, not INTERNAL', () => {
  it('a string field whose length runs past the end of the message', async () => {
    // lock says 20 bytes, 3 follow
    const body = msg(hdr(), ld(3, sessionId), Buffer.from([(2 << 3) | 2, 20, 0x61, 0x62, 0x63]));
    const err = await refused(bytesClient, '/fencelock.v1.Lock/Acquire', body);
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toBe('lock: is truncated: its length says 20 bytes but only 3 remain in the message');
    expect((await describeLock('abc')).latestToken).toBe('0');
  });

  it('a nested message cut short (header.client_id truncated inside header)', async () => {
    const inner = Buffer.from([(1 << 3) | 2, 10, 0x61, 0x62]); // client_id says 10 bytes, 2 follow
    const err = await refused(bytesClient, '/fencelock.v1.Lock/Acquire', msg(ld(1, inner), ld(2, 'sec-trunc'), ld(3, sessionId)));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/^header\.client_id: is truncated/);
    expect((await describeLock('sec-trunc')).latestToken).toBe('0');
  });

  it('a message cut inside a varint, a field of the wrong wire type, and bytes that are not protobuf', async () => {
    const cut = await refused(bytesClient, '/fencelock.v1.Lock/Acquire', msg(ld(2, 'sec-x'), Buffer.from([(4 << 3) | 0, 0x80])));
    expect(cut.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(cut.details).toMatch(/^request: is not a valid fencelock\.v1\.AcquireRequest: cannot be read at byte \d+ \(wait_timeout_ms/);
    const wrongType = await refused(bytesClient, '/fencelock.v1.Lock/Acquire', uint(2, 5));
    expect(wrongType.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(wrongType.details).toMatch(/^lock: has wire type varint; its type needs length-delimited/);
    // A scalar sent length-delimited: protobufjs would read the length as the token and the payload as more
    // fields (here a lock name that is not UTF-8), out of sight of a walk that skipped the payload.
    const smuggled = msg(hdr(), ld(2, 'sec-smuggle'), ld(3, sessionId), ld(4, ld(2, [0x73, 0xff])));
    const scalar = await refused(bytesClient, '/fencelock.v1.Lock/Release', smuggled);
    expect(scalar.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(scalar.details).toMatch(/^token: has wire type length-delimited; its type needs varint/);
    const garbage = await refused(bytesClient, '/fencelock.v1.KV/Write', Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]));
    expect(garbage.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(garbage.details).toMatch(/^request: is not a valid fencelock\.v1\.WriteRequest/);
    expect((await describeLock('sec-x')).latestToken).toBe('0');
  });
});

describe('Pipeline stream', () => {
  it('a call that cannot be decoded is answered INVALID_ARGUMENT with its call_id, and the stream goes on', async () => {
    const stream = bytesClient.makeBidiStreamRequest('/fencelock.v1.Pipeline/Calls', identity, identity);
    const answers: Array<Record<string, unknown>> = [];
    stream.on('data', (b: Buffer) => answers.push(CallResponse.toObject(CallResponse.decode(b), { longs: String, defaults: true })));
    stream.on('error', () => undefined);
    stream.write(msg(uint(1, 7), ld(10, msg(hdr(), ld(2, [0x70, 0xff]), ld(3, sessionId)))));
    stream.write(msg(uint(1, 8), ld(12, msg(hdr(), ld(2, 'sec-kv'), uint(3, 1), ld(4, sessionId), ld(5, msg(uint(1, 1), ld(2, [0xc3, 0x28])))))));
    stream.write(msg(uint(1, 9), ld(13, ld(1, 'sec-k0'))));
    await eventually(() => answers.length >= 3, 10_000, 'three answers');
    const byId = Object.fromEntries(answers.map((a) => [a.callId, a]));
    expect(byId['7'].code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(byId['7'].message).toMatch(/^acquire\.lock: is not valid UTF-8/);
    expect(byId['8'].code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(byId['8'].message).toMatch(/^write\.ops\[0\]\.key: is not valid UTF-8 \(byte 0 of 2, 0xc3,/);
    expect(byId['9'].code).toBe(grpc.status.OK);
    stream.end();
    expect((await describeLock('p\uFFFD')).latestToken).toBe('0');
  });

  it('a CallRequest that cannot be read at all ends the stream with INVALID_ARGUMENT', async () => {
    const stream = bytesClient.makeBidiStreamRequest('/fencelock.v1.Pipeline/Calls', identity, identity);
    const status = new Promise<grpc.StatusObject>((resolve) => stream.on('status', resolve));
    stream.on('data', () => undefined);
    stream.on('error', () => undefined);
    stream.write(Buffer.from([(10 << 3) | 2, 50, 0x0a])); // acquire says 50 bytes, 1 follows; no call_id before it
    const s = await status;
    expect(s.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(s.details).toMatch(/^acquire: is truncated/);
  });
});

// The client listener's options, on a server in this process with the strict KV service (server.ts is
// being split into a client and a peer listener; once it uses CLIENT_SERVER_OPTIONS, the same holds for
// the node).
describe('message size on the client listener (CLIENT_SERVER_OPTIONS)', () => {
  let server: grpc.Server;
  let client: grpc.Client;
  const seen: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    const def = protoLoader.loadSync(protoFile('fencelock/v1/lock.proto'), { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true });
    const v1 = (grpc.loadPackageDefinition(def) as unknown as { fencelock: { v1: Record<string, { service: grpc.ServiceDefinition }> } }).fencelock.v1;
    server = new grpc.Server(CLIENT_SERVER_OPTIONS);
    const kv: grpc.UntypedServiceImplementation = {
      Write: ((call, cb) => {
        seen.push(call.request as Record<string, unknown>);
        cb(null, { index: '1' });
      }) as grpc.handleUnaryCall<unknown, unknown>,
      Get: ((_call, cb) => cb(null, {})) as grpc.handleUnaryCall<unknown, unknown>,
      List: ((_call, cb) => cb(null, {})) as grpc.handleUnaryCall<unknown, unknown>,
    };
    server.addService(...strictService(v1.KV.service, kv));
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.max_send_message_length': -1 });
  });

  afterAll(() => {
    client?.close();
    server?.forceShutdown();
  });

  /** The largest write the API accepts: 64 ops whose keys and values sum to 512 KiB, with the longest names. */
  function largestLegalWrite(): Buffer {
    const perOp = L.MAX_WRITE_BYTES / L.MAX_OPS_PER_WRITE;
    const ops = Array.from({ length: L.MAX_OPS_PER_WRITE }, (_, i) => {
      const key = `k${String(i).padStart(3, '0')}`.padEnd(L.MAX_KEY_BYTES, 'x');
      return ld(5, msg(uint(1, 1), ld(2, key), ld(3, Buffer.alloc(perOp - L.MAX_KEY_BYTES, 0x76))));
    });
    const header = ld(1, msg(ld(1, 'c'.repeat(L.MAX_CLIENT_ID_BYTES)), uint(2, 2 ** 53 - 1), uint(3, 2 ** 53 - 1)));
    return msg(header, ld(2, 'l'.repeat(L.MAX_LOCK_NAME_BYTES)), uint(3, 2 ** 53 - 1), ld(4, 'f'.repeat(32)), ...ops);
  }

  it('the largest legal write fits, with room to spare', async () => {
    const body = largestLegalWrite();
    expect(body.length).toBeLessThanOrEqual(MAX_LEGAL_REQUEST_BYTES);
    expect(MAX_LEGAL_REQUEST_BYTES * 4).toBeLessThan(MAX_CLIENT_MESSAGE_BYTES);
    const { err } = await rawUnary(client, '/fencelock.v1.KV/Write', body);
    expect(err).toBeUndefined();
    expect((seen.at(-1)!.ops as unknown[]).length).toBe(L.MAX_OPS_PER_WRITE);
  });

  it('a message one byte over the limit is RESOURCE_EXHAUSTED and never reaches the handler', async () => {
    const before = seen.length;
    const filler = MAX_CLIENT_MESSAGE_BYTES + 1 - 1 - varint(MAX_CLIENT_MESSAGE_BYTES).length; // tag, length, bytes
    const body = ld(2, Buffer.alloc(filler, 0x61));
    expect(body.length).toBe(MAX_CLIENT_MESSAGE_BYTES + 1);
    const err = await refused(client, '/fencelock.v1.KV/Write', body);
    expect(err.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(seen.length).toBe(before);
    const atLimit = ld(2, Buffer.alloc(filler - 1, 0x61));
    expect(atLimit.length).toBe(MAX_CLIENT_MESSAGE_BYTES);
    expect((await rawUnary(client, '/fencelock.v1.KV/Write', atLimit)).err).toBeUndefined();
  });
});

describe('message size on a real node', () => {
  it('a request over 4 MiB is RESOURCE_EXHAUSTED from the node, which goes on serving', async () => {
    const big = new grpc.Client(address, testCredentials(), { 'grpc.max_send_message_length': -1 });
    try {
      const body = ld(2, Buffer.alloc(MAX_CLIENT_MESSAGE_BYTES, 0x61));
      const err = await refused(big, '/fencelock.v1.KV/Write', body);
      expect(err.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    } finally {
      big.close();
    }
    expect((await raw.call('Cluster', 'Status', {})).role).toBe('leader');
  });
});

describe('the UTF-8 check itself', () => {
  it('agrees with a fatal TextDecoder on random and edge-case byte strings', () => {
    const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    const valid = (b: Uint8Array): boolean => {
      try {
        fatal.decode(b);
        return true;
      } catch {
        return false;
      }
    };
    const rnd = mulberry32(7);
    const interesting = [0x00, 0x41, 0x7f, 0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xa0, 0xed, 0x9f, 0xee, 0xef, 0xf0, 0x90, 0xf4, 0x8f, 0xf5, 0xff];
    for (let n = 0; n < 20_000; n++) {
      const len = Math.floor(rnd() * 8);
      const b = Uint8Array.from({ length: len }, () => (rnd() < 0.7 ? interesting[Math.floor(rnd() * interesting.length)] : Math.floor(rnd() * 256)));
      const at = firstInvalidUtf8(b);
      if (valid(b)) expect(at).toBe(b.length);
      else {
        expect(at).toBeLessThanOrEqual(b.length);
        expect(valid(b.subarray(0, at))).toBe(true); // everything before the reported byte is fine
      }
    }
  });
});
