import * as grpc from '@grpc/grpc-js';
import * as L from '../../state/limits';
import { ApiError } from './errors';
import type { CallScope, Handler, NodeContext } from './context';
import { expectOk } from './refusals';
import * as v from './validate';

interface MoveReq {
  header?: v.WireHeader;
  what?: 'key' | 'prefix';
  key?: string;
  prefix?: string;
  toLock?: string;
}

/** KV.Move (admin): binds a key, or the keys under a prefix, to another lock (docs/auth.md "Moving keys"). */
export function moveKeys(ctx: NodeContext): Handler<MoveReq, object> {
  return async (req: MoveReq, call: CallScope) => {
    const id = v.header(req.header);
    const toLock = v.lockName(req.toLock, 'to_lock');
    const target =
      req.what === 'key'
        ? { key: v.key(req.key) }
        : req.what === 'prefix'
          ? { prefix: v.text('prefix', req.prefix ?? '', L.MAX_KEY_BYTES, { allowEmpty: true }) }
          : undefined;
    if (target === undefined) throw new ApiError(grpc.status.INVALID_ARGUMENT, 'what: set key or prefix');
    ctx.access.permitAdmin(call.caller);
    const { index, result } = await ctx.proposeOrRecall({ type: 'MoveKeys', ...id, ...ctx.access.stamp(call.caller), now: ctx.now(), ...target, toLock });
    const ok = expectOk(result);
    if (ok.status !== 'keys_moved') throw new ApiError(grpc.status.INTERNAL, `unexpected result ${ok.status}`);
    return { moved: String(ok.moved), index: String(index ?? 0) };
  };
}
