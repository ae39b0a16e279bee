import * as grpc from '@grpc/grpc-js';
import type { KvEntry, Result, WriteOp } from '../../state';
import * as L from '../../state/limits';
import { utf8ByteLength } from '../../state/text';
import { ApiError, invalidArgument } from './errors';
import { unary, type CallScope, type Handler, type NodeContext } from './context';
import { moveKeys } from './moveKeys';
import { expectOk, withheldRefusalError } from './refusals';
import * as v from './validate';

interface WireOp {
  type?: string;
  key?: string;
  value?: Buffer;
}
interface WriteReq {
  header?: v.WireHeader;
  lock?: string;
  token?: string;
  sessionId?: string;
  ops?: WireOp[];
}

function ops(wire: WireOp[] | undefined): WriteOp[] {
  if (!wire || wire.length === 0) throw invalidArgument('ops', 'a write needs at least one op');
  if (wire.length > L.MAX_OPS_PER_WRITE) throw invalidArgument('ops', `has ${wire.length} ops; the limit is ${L.MAX_OPS_PER_WRITE}`);
  let bytes = 0;
  const out = wire.map((op, i): WriteOp => {
    const key = v.key(op.key, `ops[${i}].key`);
    bytes += utf8ByteLength(key);
    if (op.type === 'PUT') {
      const value = op.value ?? Buffer.alloc(0);
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

interface GetReq {
  key?: string;
  staleOk?: boolean;
}

interface ListReq {
  prefix?: string;
  startAfter?: string;
  limit?: number;
  includeDeleted?: boolean;
}

/** A stored key as GetResponse and KeyValue carry it: a deleted key keeps its lock and watermark. */
function wireEntry(e: KvEntry): { value: Buffer; token: string; lock: string; deleted: boolean } {
  return { value: Buffer.from(e.value ?? new Uint8Array(0)), token: String(e.watermark), lock: e.lock, deleted: e.value === null };
}

/** The KV service, and its hot calls for the Pipeline stream. */
export function kvService(ctx: NodeContext): { service: grpc.UntypedServiceImplementation; calls: { write: Handler<WriteReq, object>; get: Handler<GetReq, object> } } {
  const { access } = ctx;
  /** Linearizable unless the caller accepts this node's possibly stale state. */
  const readBarrier = async (staleOk: boolean | undefined): Promise<void> => {
    if (!staleOk) await ctx.linearizableRead();
  };
  const write = async (req: WriteReq, call: CallScope): Promise<object> => {
    const id = v.header(req.header);
    const lock = v.lockName(req.lock);
    const token = v.token(req.token);
    const sessionId = v.sessionId(req.sessionId);
    const writeOps = ops(req.ops);
    for (const op of writeOps) access.permit(call.caller, 'write', op.key);
    access.permitSession(call.caller, sessionId);
    const command = { type: 'Write' as const, ...id, ...access.stamp(call.caller), now: ctx.now(), lock, token, sessionId, ops: writeOps };
    // A retry is answered with the index of the entry that applied the write (stored with its result). A
    // result stored before it carried the index (restored from an older snapshot) is not recalled: the
    // retry is proposed and answered with its own entry's index, as before.
    const oldWritten = (r: Result): boolean => r.status === 'written' && r.index === undefined;
    const { index, result } = await ctx.proposeOrRecall(command, (r) => !oldWritten(r));
    // A refusal names a key's lock and a watermark only to a caller that may read that key or lock that
    // lock (for no key: lock the write's lock); others learn the reason and their own key.
    if (result.status === 'refused' && (result.owner !== undefined || result.watermark !== 0)) {
      const mayKnow = result.key !== undefined ? access.may(call.caller, 'read', result.key) || access.may(call.caller, 'lock', result.owner ?? lock) : access.may(call.caller, 'lock', lock);
      if (!mayKnow) throw withheldRefusalError(result.reason, lock, result.key);
    }
    const ok = expectOk(result);
    if (ok.status !== 'written') throw new ApiError(grpc.status.INTERNAL, `unexpected result ${ok.status}`);
    return { index: String(ok.index ?? index) };
  };

  const get = async (req: GetReq, call: CallScope): Promise<object> => {
    const key = v.key(req.key);
    access.permit(call.caller, 'read', key);
    await readBarrier(req.staleOk);
    // Judged again as of the state read: a revoke applied while the read waited holds for it.
    access.permit(call.caller, 'read', key);
    const entry = ctx.machine.get(key);
    if (!entry) return { found: false, deleted: false, value: Buffer.alloc(0), token: '0', lock: '' };
    return { found: entry.value !== null, ...wireEntry(entry) };
  };

  const list = async (req: ListReq, call: CallScope): Promise<object> => {
    const prefix = v.text('prefix', req.prefix ?? '', L.MAX_KEY_BYTES, { allowEmpty: true });
    access.permitList(call.caller, prefix);
    const startAfter = v.text('start_after', req.startAfter ?? '', L.MAX_KEY_BYTES, { allowEmpty: true });
    const limit = req.limit ? v.safeInteger('limit', req.limit, { min: 1, max: L.MAX_LIST_LIMIT }) : 100;
    await readBarrier(false);
    access.permitList(call.caller, prefix);
    // One more than asked tells whether there are more.
    const items = ctx.machine.list(prefix, limit + 1, { startAfter: startAfter || undefined, includeDeleted: req.includeDeleted === true });
    return { items: items.slice(0, limit).map((e) => ({ key: e.key, ...wireEntry(e) })), more: items.length > limit };
  };

  const service: grpc.UntypedServiceImplementation = {
    Write: unary(ctx, 'KV.Write', write),
    Get: unary(ctx, 'KV.Get', get),
    List: unary(ctx, 'KV.List', list),
    Move: unary(ctx, 'KV.Move', moveKeys(ctx)),
  };
  return { service, calls: { write, get } };
}
