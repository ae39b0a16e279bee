import type * as grpc from '@grpc/grpc-js';
import type { KvEntry, Result, WriteOp } from '../../state';
import * as L from '../../state/limits';
import { utf8ByteLength } from '../../state/text';
import type { GetRequest__Output } from '../../protocol/generated/fencelock/v1/GetRequest';
import type { GetResponse__Output } from '../../protocol/generated/fencelock/v1/GetResponse';
import type { KeyValue__Output } from '../../protocol/generated/fencelock/v1/KeyValue';
import type { ListRequest__Output } from '../../protocol/generated/fencelock/v1/ListRequest';
import type { ListResponse__Output } from '../../protocol/generated/fencelock/v1/ListResponse';
import type { Op__Output } from '../../protocol/generated/fencelock/v1/Op';
import type { WriteRequest__Output } from '../../protocol/generated/fencelock/v1/WriteRequest';
import type { WriteResponse__Output } from '../../protocol/generated/fencelock/v1/WriteResponse';
import { intToWire } from '../../protocol/wireInt';
import { invalidArgument } from './errors';
import type { CallScope, NodeContext } from './context';
import { moveKeys } from './moveKeys';
import { proposing } from './proposal';
import { withheldRefusalError } from './refusals';
import { unaryMethods, type PipelineCalls } from './rpc';
import * as v from './validate';

function ops(wire: Op__Output[]): WriteOp[] {
  if (wire.length === 0) throw invalidArgument('ops', 'a write needs at least one op');
  if (wire.length > L.MAX_OPS_PER_WRITE) throw invalidArgument('ops', `has ${wire.length} ops; the limit is ${L.MAX_OPS_PER_WRITE}`);
  let bytes = 0;
  const out = wire.map((op, i): WriteOp => {
    const key = v.key(op.key, `ops[${i}].key`);
    bytes += utf8ByteLength(key);
    if (op.type === 'PUT') {
      const value = op.value;
      if (value.length > L.MAX_VALUE_BYTES) throw invalidArgument(`ops[${i}].value`, `is ${value.length} bytes; the limit is ${L.MAX_VALUE_BYTES}`);
      bytes += value.length;
      return { type: 'put', key, value: new Uint8Array(value) };
    }
    if (op.type === 'DELETE') return { type: 'delete', key };
    throw invalidArgument(`ops[${i}].type`, 'must be PUT or DELETE');
  });
  if (bytes > L.MAX_WRITE_BYTES) throw invalidArgument('ops', `carry ${bytes} bytes; the limit is ${L.MAX_WRITE_BYTES}`);
  return out;
}

/** A stored key as GetResponse and KeyValue carry it: a deleted key keeps its lock and watermark. */
function wireEntry(e: KvEntry): Omit<KeyValue__Output, 'key'> {
  return {
    value: Buffer.from(e.value ?? new Uint8Array(0)),
    token: intToWire('token', e.watermark),
    lock: e.lock,
    deleted: e.value === null,
    semaphore: e.slot !== undefined,
    slot: e.slot ?? 0,
  };
}

/** The KV service, and its hot calls for the Pipeline stream. */
export function kvService(ctx: NodeContext): { service: grpc.UntypedServiceImplementation; calls: Pick<PipelineCalls, 'write' | 'get'> } {
  const { access } = ctx;
  /** Linearizable unless the caller accepts this node's possibly stale state. */
  const readBarrier = async (staleOk: boolean): Promise<void> => {
    if (!staleOk) await ctx.linearizableRead();
  };
  // A retry is answered with the index of the entry that applied the write (stored with its result). A
  // result stored before it carried the index (restored from an older snapshot) is not recalled: the
  // retry is proposed and answered with its own entry's index, as before.
  const oldWritten = (r: Result): boolean => r.status === 'written' && r.index === undefined;
  const write = proposing(ctx, {
    name: 'KV.Write',
    command: 'Write',
    fields: (req: WriteRequest__Output, caller) => {
      const lock = v.lockName(req.lock);
      const token = v.token(req.token);
      const sessionId = v.sessionId(req.sessionId);
      const writeOps = ops(req.ops);
      for (const op of writeOps) access.permit(caller, 'write', op.key);
      access.permitSession(caller, sessionId);
      // Under a permit: `lock` names the semaphore (the same name rules), `slot` its slot.
      const slot = req.semaphore ? v.safeInteger('slot', req.slot, { max: L.MAX_PERMITS - 1 }) : undefined;
      return slot === undefined ? { lock, token, sessionId, ops: writeOps } : { lock, token, sessionId, ops: writeOps, slot };
    },
    recall: (stored) => !oldWritten(stored),
    answers: 'written',
    response: (ok, index): WriteResponse__Output => ({ index: intToWire('index', ok.index ?? index ?? 0) }),
    // A refusal names a key's lock and a watermark only to a caller that may read that key or lock that
    // lock (for no key: lock the write's lock); others learn the reason and their own key.
    withhold: (refused, { lock }, caller) => {
      if (refused.owner === undefined && refused.watermark === 0) return undefined;
      const mayKnow = refused.key !== undefined ? access.may(caller, 'read', refused.key) || access.may(caller, 'lock', refused.owner ?? lock) : access.may(caller, 'lock', lock);
      return mayKnow ? undefined : withheldRefusalError(refused.reason, lock, refused.key);
    },
  });

  const get = async (req: GetRequest__Output, call: CallScope): Promise<GetResponse__Output> => {
    const key = v.key(req.key);
    access.permit(call.caller, 'read', key);
    await readBarrier(req.staleOk);
    // Judged again as of the state read: a revoke applied while the read waited holds for it.
    access.permit(call.caller, 'read', key);
    const entry = ctx.machine.get(key);
    if (!entry) return { found: false, deleted: false, value: Buffer.alloc(0), token: intToWire('token', 0), lock: '', semaphore: false, slot: 0 };
    return { found: entry.value !== null, ...wireEntry(entry) };
  };

  const list = async (req: ListRequest__Output, call: CallScope): Promise<ListResponse__Output> => {
    const prefix = v.text('prefix', req.prefix, L.MAX_KEY_BYTES, { allowEmpty: true });
    access.permitList(call.caller, prefix);
    const startAfter = v.text('start_after', req.startAfter, L.MAX_KEY_BYTES, { allowEmpty: true });
    const limit = req.limit ? v.safeInteger('limit', req.limit, { min: 1, max: L.MAX_LIST_LIMIT }) : 100;
    await readBarrier(false);
    access.permitList(call.caller, prefix);
    // One more than asked tells whether there are more.
    const items = ctx.machine.list(prefix, limit + 1, { startAfter: startAfter || undefined, includeDeleted: req.includeDeleted });
    return { items: items.slice(0, limit).map((e) => ({ key: e.key, ...wireEntry(e) })), more: items.length > limit };
  };

  const calls = { write, get: { name: 'KV.Get', handle: get } };
  const service = unaryMethods(ctx, [write, calls.get, { name: 'KV.List', handle: list }, moveKeys(ctx)]);
  return { service, calls };
}
