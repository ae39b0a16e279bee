// JSON <-> the API's protobuf messages, in the proto3 JSON mapping (docs/http.md "JSON"): lowerCamelCase
// field names (the proto's snake_case names are accepted too), 64-bit integers as decimal strings, enums by
// name, bytes as base64. A request is checked here only for its JSON shape (known fields, the right JSON
// types); it is then encoded to protobuf and decoded by the served method's own strict deserializer, so
// that the handler sees exactly what a gRPC call with the same message would give it.
import * as protobuf from 'protobufjs';
import { protoFile } from '../../codec/protoPath';
import { ApiError } from '../api/errors';
import * as grpc from '@grpc/grpc-js';

let root: protobuf.Root | undefined;

function lockProto(): protobuf.Root {
  if (!root) {
    root = protobuf.loadSync(protoFile('fencelock/v1/lock.proto'));
    root.resolveAll();
  }
  return root;
}

/** The request and response types of a method path (/fencelock.v1.Lock/Acquire). */
export function messageTypes(path: string): { request: protobuf.Type; response: protobuf.Type } {
  const [, service, method] = /^\/(.+)\/([^/]+)$/.exec(path) ?? [];
  const rpc = lockProto().lookupService(service ?? '').methods[method ?? ''];
  if (!rpc) throw new Error(`lock.proto has no method ${path}`);
  const { resolvedRequestType: request, resolvedResponseType: response } = rpc.resolve() as protobuf.Method;
  if (!request || !response) throw new Error(`lock.proto: cannot resolve the types of ${path}`);
  return { request, response };
}

const badRequest = (field: string, why: string): ApiError => new ApiError(grpc.status.INVALID_ARGUMENT, `${field}: ${why}`);

const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The field of `type` a JSON member names (lowerCamelCase or the proto's own name). */
function fieldNamed(type: protobuf.Type, key: string): protobuf.Field | undefined {
  return type.fields[key] ?? type.fieldsArray.find((f) => snakeCase(f.name) === key);
}

const INT32 = new Set(['int32', 'sint32', 'sfixed32', 'uint32', 'fixed32']);
const INT64 = new Set(['int64', 'sint64', 'sfixed64', 'uint64', 'fixed64']);

/** A JSON value as the object protobufjs encodes, checked against the field's type. */
function scalar(field: protobuf.Field, value: unknown, at: string): unknown {
  const t = field.type;
  if (t === 'string') {
    if (typeof value !== 'string') throw badRequest(at, 'must be a JSON string');
    return value;
  }
  if (t === 'bool') {
    if (typeof value !== 'boolean') throw badRequest(at, 'must be true or false');
    return value;
  }
  if (t === 'bytes') {
    if (typeof value !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value)) throw badRequest(at, 'must be base64 text (bytes, as in the proto3 JSON mapping)');
    return Buffer.from(value, 'base64');
  }
  if (INT32.has(t) || INT64.has(t)) return integer(t, value, at);
  if (field.resolvedType instanceof protobuf.Enum) {
    const values = field.resolvedType.values;
    if (typeof value === 'string' && value in values) return values[value];
    if (typeof value === 'number' && Object.values(values).includes(value)) return value;
    throw badRequest(at, `must be one of ${Object.keys(values).join(', ')}`);
  }
  throw badRequest(at, `has type ${t}, which the gateway does not take`);
}

/** 64-bit integers as decimal strings (or JSON numbers up to 2^53); 32-bit ones as numbers or strings. */
function integer(type: string, value: unknown, at: string): unknown {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof text !== 'string' || !/^-?\d{1,20}$/.test(text)) throw badRequest(at, 'must be an integer (64-bit integers as a decimal string)');
  const n = BigInt(text);
  const unsigned = type.startsWith('u') || type.startsWith('fixed');
  const bits = INT64.has(type) ? 64n : 32n;
  const [min, max] = unsigned ? [0n, (1n << bits) - 1n] : [-(1n << (bits - 1n)), (1n << (bits - 1n)) - 1n];
  if (n < min || n > max) throw badRequest(at, `is out of range for ${type}`);
  // protobufjs reads a 64-bit integer from its decimal text exactly (Long.fromValue).
  return INT64.has(type) ? text : Number(n);
}

/** A JSON object as the plain object protobufjs encodes for `type`; INVALID_ARGUMENT naming the field. */
export function fromJson(type: protobuf.Type, json: unknown, at = 'request'): Record<string, unknown> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw badRequest(at, `must be a JSON object (${type.name})`);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json)) {
    const field = fieldNamed(type, key);
    const where = at === 'request' ? key : `${at}.${key}`;
    if (!field) throw badRequest(where, `is not a field of ${type.name}`);
    if (value === null) continue; // proto3 JSON: null is the default
    out[field.name] = fieldValue(field, value, where);
  }
  return out;
}

function fieldValue(field: protobuf.Field, value: unknown, at: string): unknown {
  if (field instanceof protobuf.MapField) {
    if (typeof value !== 'object' || Array.isArray(value) || value === null) throw badRequest(at, 'must be a JSON object (a map)');
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, element(field, v, `${at}.${k}`)]));
  }
  if (field.repeated) {
    if (!Array.isArray(value)) throw badRequest(at, 'must be a JSON array');
    return value.map((v, i) => element(field, v, `${at}[${i}]`));
  }
  return element(field, value, at);
}

function element(field: protobuf.Field, value: unknown, at: string): unknown {
  const type = field.resolve().resolvedType;
  return type instanceof protobuf.Type ? type.fromObject(fromJson(type, value, at)) : scalar(field, value, at);
}

/** A query string's parameters as a request of `type`: only scalar fields, each given once. */
export function fromQuery(type: protobuf.Type, params: URLSearchParams): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    const field = fieldNamed(type, key);
    if (!field) throw badRequest(key, `is not a parameter of ${type.name}`);
    if (values.length !== 1) throw badRequest(key, 'must be given once');
    if (field.repeated || field.resolve().resolvedType instanceof protobuf.Type) throw badRequest(key, 'cannot be given in the query; POST a JSON body');
    const [text = ''] = values;
    json[key] = field.type === 'bool' ? boolean(text, key) : text;
  }
  return fromJson(type, json);
}

function boolean(text: string, at: string): boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw badRequest(at, 'must be true or false');
}

/** Protobuf bytes of a request built from a checked plain object. */
export function encodeRequest(type: protobuf.Type, plain: Record<string, unknown>): Buffer {
  return Buffer.from(type.encode(type.fromObject(plain)).finish());
}

/** A response's protobuf bytes as its JSON object (every field present, as the gRPC answer has them). */
export function toJson(type: protobuf.Type, bytes: Buffer): Record<string, unknown> {
  return type.toObject(type.decode(bytes), { longs: String, enums: String, bytes: String, defaults: true, arrays: true, objects: true, json: true });
}
