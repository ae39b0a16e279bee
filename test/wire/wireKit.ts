// The kit of the wire property tests (test/wire): a real TLS node with auth on, a raw gRPC client built from
// lock.proto with the loader options the project uses (so the TypeScript client is not under test), a
// seeded generator of edge values, and checks of every field of every answer against lock.proto and
// docs/limits.md. Black-box: nothing here reaches into the server's code.
import { isUtf8 } from 'node:buffer';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import * as protobuf from 'protobufjs';
import { beforeEach, expect } from 'vitest';
import { protoFile } from '../../src/codec/protoPath';
import { eventually, LocalCluster, testCredentials } from '../integration/harness';
import { Prng } from '../support/prng';

// ---- the proto, as the project loads it ------------------------------------------------------------------

/** The project's loader options (the node's and the client library's): 64-bit integers as decimal strings. */
export const LOADER_OPTIONS: protoLoader.Options = { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true };
const PROTO = protoFile('fencelock/v1/lock.proto');
const definition = protoLoader.loadSync(PROTO, LOADER_OPTIONS);
const constructors = (grpc.loadPackageDefinition(definition) as unknown as { fencelock: { v1: Record<string, grpc.ServiceClientConstructor> } }).fencelock.v1;
const reflection = protobuf.loadSync(PROTO);

export type Service = 'Session' | 'Lock' | 'Semaphore' | 'KV' | 'Cluster' | 'Pipeline' | 'Auth';
const SERVICES: Service[] = ['Session', 'Lock', 'Semaphore', 'KV', 'Cluster', 'Pipeline', 'Auth'];
// Wire messages are loosely typed on purpose: the tests send what the proto allows, not what a type says.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Obj = Record<string, any>;

function methodOf(service: Service, method: string): protoLoader.MethodDefinition<object, object> {
  const m = (definition[`fencelock.v1.${service}`] as protoLoader.ServiceDefinition | undefined)?.[method];
  if (!m) throw new Error(`lock.proto has no ${service}.${method}`);
  return m;
}

/** The request as the server decodes it: through the serializer both ends use. Throws if it cannot be sent. */
export function asDecoded(service: Service, method: string, req: Obj): Obj {
  const m = methodOf(service, method);
  return m.requestDeserialize(m.requestSerialize(req)) as Obj;
}

/** The response type's fully qualified name, for shape checks. */
export function responseType(service: Service, method: string): string {
  return (methodOf(service, method).responseType as unknown as { type: { name: string } }).type.name;
}

// ---- a raw client ---------------------------------------------------------------------------------------

export type Outcome = { ok: true; res: Obj } | { ok: false; code: grpc.status; details: string; metadata: grpc.Metadata };

/** One node, every service, no retries and no leader following: it sends exactly what it is given. */
export class WireClient {
  private readonly stubs: Record<Service, grpc.Client>;

  constructor(
    readonly address: string,
    credentials: grpc.ChannelCredentials = testCredentials(),
    private readonly bearer?: string,
  ) {
    this.stubs = Object.fromEntries(SERVICES.map((s) => [s, new constructors[s]!(address, credentials)])) as unknown as Record<Service, grpc.Client>;
  }

  private metadata(): grpc.Metadata {
    const md = new grpc.Metadata();
    if (this.bearer !== undefined) md.set('authorization', `Bearer ${this.bearer}`);
    return md;
  }

  private fn(service: Service, method: string): (...args: unknown[]) => unknown {
    const stub = this.stubs[service] as unknown as Record<string, (...args: unknown[]) => unknown>;
    return stub[method]!.bind(stub);
  }

  unary(service: Service, method: string, req: Obj, timeoutMs = 10_000): Promise<Outcome> {
    return new Promise((resolve) => {
      this.fn(service, method)(req, this.metadata(), { deadline: Date.now() + timeoutMs }, (err: grpc.ServiceError | null, res: Obj) =>
        resolve(err ? { ok: false, code: err.code, details: err.details, metadata: err.metadata } : { ok: true, res }),
      );
    });
  }

  duplex(service: Service, method: string): grpc.ClientDuplexStream<Obj, Obj> {
    return this.fn(service, method)(this.metadata()) as grpc.ClientDuplexStream<Obj, Obj>;
  }

  serverStream(service: Service, method: string, req: Obj, timeoutMs = 10_000): grpc.ClientReadableStream<Obj> {
    return this.fn(service, method)(req, this.metadata(), { deadline: Date.now() + timeoutMs }) as grpc.ClientReadableStream<Obj>;
  }

  close(): void {
    // Session.Close shadows Client.close in generated clients: close each channel directly.
    for (const stub of Object.values(this.stubs)) grpc.getClientChannel(stub).close();
  }
}

// ---- a real cluster -------------------------------------------------------------------------------------

/** The identity of the harness's client certificate: the cluster's admin. */
export const ADMIN = 'test';

export interface WireCluster {
  cluster: LocalCluster;
  /** A client of the leader, as the admin. */
  leader: WireClient;
  clients: WireClient[];
  /** When the cluster answered first (leader wall clock plausibility). */
  startedAt: number;
  stop(): Promise<void>;
}

/** A TLS cluster with auth on and the harness's certificate as its admin, once every node follows a leader with auth on. */
export async function startCluster(size = 1): Promise<WireCluster> {
  const startedAt = Date.now();
  const cluster = await LocalCluster.create({ size, authAdmin: ADMIN });
  cluster.startAll();
  const clients = cluster.endpoints.map((a) => new WireClient(a));
  const leader = await eventually(
    async () => {
      for (const c of clients) {
        const status = await c.unary('Cluster', 'Status', {}, 2_000);
        if (!status.ok || status.res.role !== 'leader') continue;
        const who = await c.unary('Auth', 'WhoAmI', {}, 2_000);
        if (who.ok && who.res.authEnabled === true) return c;
      }
      return undefined;
    },
    60_000,
    'a leader with auth on',
  );
  // Every node up and following: the tests ask each node, and a follower must know whom to point at.
  await eventually(
    async () => {
      for (const c of clients) {
        const status = await c.unary('Cluster', 'Status', {}, 2_000);
        if (!status.ok || status.res.leaderAddress !== leader.address) return false;
      }
      return true;
    },
    60_000,
    'every node following the leader',
  );
  return {
    cluster,
    leader,
    clients,
    startedAt,
    async stop() {
      for (const c of clients) c.close();
      await cluster.destroy();
    },
  };
}

// ---- seeded generation ----------------------------------------------------------------------------------

/** The run's seed: WIRE_SEED=N replays a run. Printed when a test fails. */
export const SEED = process.env.WIRE_SEED !== undefined ? Number(process.env.WIRE_SEED) : Math.floor(Math.random() * 2 ** 31);

/** Prints the seed with any failure of the file's tests, so that a failing run can be replayed. */
export function printSeedOnFailure(): void {
  beforeEach(({ onTestFailed, task }) => {
    onTestFailed(() => console.error(`[test/wire] "${task.name}" failed; replay with WIRE_SEED=${SEED}`));
  });
}

/** A generator for one test: its own stream of the run's seed, so tests do not shift each other's values. */
export function generator(label: string): Gen {
  return new Gen(Prng.derive(SEED, label));
}

export const MAX_SAFE = 2 ** 53 - 1;
export const U64_MAX = '18446744073709551615';

/** An integer field's valid range (inclusive). */
export interface IntRange {
  min: number;
  max: number;
}

/** A text field's valid UTF-8 byte lengths (inclusive). */
export interface TextRange {
  minBytes: number;
  maxBytes: number;
}

/** Characters of 1, 2, 3 and 4 UTF-8 bytes, and ones that often trip text handling. */
const WIDE = ['a', 'é', 'ж', '€', '中', '😀', '𝄞', '\u0000', '\u200d', '\u202e', 'e\u0301', '%', ' ', '/'];

export class Gen {
  constructor(private readonly rng: Prng) {}

  pick<T>(items: readonly T[]): T {
    return this.rng.pick(items);
  }

  int(lo: number, hi: number): number {
    return this.rng.range(lo, hi);
  }

  /**
   * Values for an integer field: edges of its range (and one past them), 0, 2^53-1, 2^64-1, fractions as
   * numbers and as decimal strings (short ones, which the encoder truncates, and long ones, which it turns
   * into other numbers), and a valid value. Each is something the JavaScript encoder accepts.
   */
  intEdges(range: IntRange): Array<string | number> {
    const valid = this.rng.range(range.min, Math.min(range.max, range.min + 1_000_000));
    const frac = `${valid}.${this.rng.range(1, 999)}`;
    const longFrac = String(valid + 0.026 + 1e-10 * this.rng.range(1, 9)); // as String(2991.026...) was
    return [
      0, '0', 1, 0.5, '0.5', range.min, range.max, String(range.max + 1), range.min - 1, -1,
      String(MAX_SAFE), String(MAX_SAFE + 1), U64_MAX, '9223372036854775807',
      valid, String(valid), valid + 0.5, frac, longFrac,
    ];
  }

  /** A text of exactly `bytes` UTF-8 bytes, of random characters (wide ones only where they fit). */
  textOfBytes(bytes: number, alphabet: readonly string[] = WIDE): string {
    let out = '';
    let left = bytes;
    while (left > 0) {
      const ch = this.rng.pick(alphabet);
      const n = Buffer.byteLength(ch);
      out += n <= left ? ch : 'x'.repeat(left);
      left -= Math.min(n, left);
    }
    return out;
  }

  /** Values for a text field: empty, the bounds and one byte past them, wide characters, a lone surrogate. */
  textEdges(range: TextRange, alphabet: readonly string[] = WIDE): string[] {
    const max = range.maxBytes;
    const inside = this.rng.range(Math.max(1, range.minBytes), max);
    return [
      '',
      'a',
      'a'.repeat(max),
      'a'.repeat(max + 1),
      this.textOfBytes(max, alphabet),
      this.textOfBytes(max - 4, alphabet) + '😀', // the last character fills the limit
      this.textOfBytes(max - 3, alphabet) + '😀', // one byte past it, inside a character
      this.textOfBytes(inside, alphabet),
      `w${this.rng.nextU32().toString(36)}\ud800`, // a lone surrogate: not UTF-8 on the wire
    ];
  }

  /** A fresh name for something the test makes (lock, key, client id), unique in the run. */
  name(prefix: string): string {
    return `${prefix}-${++names}-${this.rng.nextU32().toString(36)}`;
  }
}
let names = 0;

// ---- what the server sees ---------------------------------------------------------------------------------

const OneString = new protobuf.Type('OneString').add(new protobuf.Field('s', 1, 'string'));
new protobuf.Root().define('wirekit').add(OneString);

/** A string as it reaches the wire: whether its bytes are UTF-8 (a lone surrogate may be sent raw) and their count. */
export function wireText(s: string): { wellFormed: boolean; bytes: number } {
  const reader = protobuf.Reader.create(OneString.encode({ s }).finish());
  if (reader.len === 0) return { wellFormed: true, bytes: 0 };
  reader.uint32(); // the tag
  const payload = reader.bytes();
  return { wellFormed: isUtf8(payload), bytes: payload.length };
}

/** Whether a text the client sends is valid for the field, as the server will see it. */
export function textValid(s: string, range: TextRange): boolean {
  const w = wireText(s);
  return w.wellFormed && w.bytes >= range.minBytes && w.bytes <= range.maxBytes;
}

/** Whether a decoded 64-bit field (decimal string) lies in the range. */
export function intValid(decoded: unknown, range: IntRange): boolean {
  const n = BigInt(String(decoded));
  return n >= BigInt(range.min) && n <= BigInt(range.max);
}

/** True when the encoder accepts the request (some strings it cannot encode at all: not wire values). */
export function sendable(service: Service, method: string, req: Obj): boolean {
  try {
    asDecoded(service, method, req);
    return true;
  } catch {
    return false;
  }
}

// ---- checks of answers ----------------------------------------------------------------------------------

const UINT = /^(0|[1-9][0-9]*)$/;

/** A wire int64/uint64 (decimal string) as a number, after checking it is one: no '.', no 'e', no sign. */
export function wireInt(what: string, v: unknown, range: IntRange = { min: 0, max: MAX_SAFE }): number {
  return Number(wireBigInt(what, v, { min: BigInt(range.min), max: BigInt(range.max) }));
}

function wireBigInt(what: string, v: unknown, range: { min: bigint; max: bigint }): bigint {
  expect(typeof v, `${what}: a 64-bit field arrives as a decimal string`).toBe('string');
  expect(v as string, `${what}: a decimal integer`).toMatch(UINT);
  const n = BigInt(v as string);
  expect(n >= range.min && n <= range.max, `${what} = ${String(v)} in [${range.min}, ${range.max}]`).toBe(true);
  return n;
}

/** Text that survives UTF-8: no lone surrogates. */
const wellFormed = (s: string): boolean => Buffer.from(s, 'utf8').toString('utf8') === s;

/**
 * Every field of a decoded message, against its declared type: 64-bit integers are non-negative decimal
 * integers below 2^53 (docs/limits.md; `wide` names (camelCase) fields that echo a client's uint64 as sent), 32-bit
 * integers whole and non-negative, strings well-formed text, bools booleans, enums known names, bytes
 * Buffers, repeated fields arrays, nested messages checked alike. Every answer in this protocol is non-negative.
 */
export function checkShape(typeName: string, msg: Obj, where = typeName, wide: readonly string[] = []): void {
  const type = reflection.lookupType(typeName);
  expect(msg, `${where}: a message`).toBeTypeOf('object');
  for (const field of type.fieldsArray) {
    field.resolve();
    const value = msg[field.name]; // camelCase in both (protobufjs and the loader's keepCase: false)
    const path = `${where}.${field.name}`;
    if (field.partOf && value === undefined) continue; // an unset oneof member
    if (field.map) {
      expect(value, `${path}: a map`).toBeTypeOf('object');
      for (const [k, v] of Object.entries(value as Obj)) checkScalar((field as unknown as protobuf.MapField).type, v, `${path}[${k}]`, field, wide);
      continue;
    }
    if (field.repeated) {
      expect(Array.isArray(value), `${path}: repeated`).toBe(true);
      (value as unknown[]).forEach((v, i) => checkValue(field, v, `${path}[${i}]`, wide));
      continue;
    }
    checkValue(field, value, path, wide);
  }
}

function checkValue(field: protobuf.Field, value: unknown, path: string, wide: readonly string[]): void {
  if (field.resolvedType instanceof protobuf.Type) {
    if (value === null || value === undefined) return; // unset message field
    checkShape(field.resolvedType.fullName.slice(1), value as Obj, path, wide);
    return;
  }
  if (field.resolvedType instanceof protobuf.Enum) {
    expect(Object.keys(field.resolvedType.values), `${path}: a known enum name`).toContain(value);
    return;
  }
  checkScalar(field.type, value, path, field, wide);
}

function checkScalar(type: string, value: unknown, path: string, field: protobuf.Field, wide: readonly string[]): void {
  switch (type) {
    case 'int64':
    case 'uint64':
    case 'sint64':
    case 'fixed64':
      wireBigInt(path, value, { min: 0n, max: wide.includes(field.name) ? BigInt(U64_MAX) : BigInt(MAX_SAFE) });
      return;
    case 'uint32':
    case 'int32':
      expect(Number.isInteger(value) && (value as number) >= 0, `${path} = ${String(value)}: a non-negative integer`).toBe(true);
      return;
    case 'string':
      expect(typeof value, `${path}: a string`).toBe('string');
      expect(wellFormed(value as string), `${path}: well-formed text`).toBe(true);
      return;
    case 'bool':
      expect(typeof value, `${path}: a bool`).toBe('boolean');
      return;
    case 'bytes':
      expect(Buffer.isBuffer(value), `${path}: bytes`).toBe(true);
      return;
    default:
      throw new Error(`${path}: no check for type ${type}`);
  }
}

/** An OK answer, shape-checked; returns the response. */
export function expectOk(out: Outcome, what: string, service: Service, method: string, wide: readonly string[] = []): Obj {
  if (!out.ok) expect.fail(`${what}: expected OK, got ${grpc.status[out.code]}: ${out.details}`);
  checkShape(responseType(service, method), out.res, `${service}.${method}`, wide);
  return out.res;
}

/** Codes that say the server itself failed: never an answer to anything a client sends. */
const SERVER_FAULTS = [grpc.status.INTERNAL, grpc.status.UNKNOWN, grpc.status.DATA_LOSS, grpc.status.UNIMPLEMENTED];

/**
 * A refusal with one of `codes` whose message names `field`: by its proto name (`token_id`), or by its
 * proto3 JSON name (`tokenId`), which is how the checks of the state machine name the fields of a command.
 */
export function expectRefused(out: Outcome, what: string, codes: grpc.status[], field?: string): void {
  if (out.ok) expect.fail(`${what}: expected ${codes.map((c) => grpc.status[c]).join('/')}, got OK ${JSON.stringify(out.res).slice(0, 300)}`);
  expect(SERVER_FAULTS, `${what}: ${grpc.status[out.code]} ${out.details}`).not.toContain(out.code);
  expect(codes, `${what}: ${grpc.status[out.code]} ${out.details}`).toContain(out.code);
  if (field === undefined) return;
  expect(namesField(out.details, field), `${what}: the message (${out.details}) names ${field} (as lock.proto spells it)`).toBe(true);
}

/**
 * Does `message` name `field` as lock.proto spells it (snake_case: `wait_timeout_ms`, `ops[0].key`), as a
 * whole name? Not inside another word (`id` in "invalid"), and not in the JSON spelling (`waitTimeoutMs`),
 * which is not the name a caller finds in the proto.
 */
export function namesField(message: string, field: string): boolean {
  const escaped = field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![A-Za-z0-9_])${escaped}(?![A-Za-z0-9_])`).test(message);
}

/** Whatever the answer, not a server fault. */
export function expectNoFault(out: Outcome, what: string): void {
  if (!out.ok) expect(SERVER_FAULTS, `${what}: ${grpc.status[out.code]} ${out.details}`).not.toContain(out.code);
}

/** The node still answers, and its processes are all running (nothing a test sent crashed it). */
export async function expectAlive(w: WireCluster): Promise<void> {
  for (const node of w.cluster.nodes) expect(w.cluster.isRunning(node.id), `${node.id} is running`).toBe(true);
  for (const c of w.clients) expect((await c.unary('Cluster', 'Status', {})).ok, `${c.address} answers Status`).toBe(true);
}

/** A request header under a client id of its own (a new client id must start at request 1). */
export function header(gen: Gen): Obj {
  return { clientId: gen.name('wire-client'), requestId: '1', ackedBelow: '0' };
}

/** The `fencelock-reason` metadata of a refusal, if any. */
export function reasonOf(out: Outcome): string | undefined {
  return out.ok ? undefined : (out.metadata.get('fencelock-reason')[0] as string | undefined);
}
