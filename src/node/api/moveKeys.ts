import * as grpc from '@grpc/grpc-js';
import * as L from '../../state/limits';
import type { MoveRequest__Output } from '../../protocol/generated/fencelock/v1/MoveRequest';
import type { MoveResponse__Output } from '../../protocol/generated/fencelock/v1/MoveResponse';
import { intToWire } from '../../protocol/wireInt';
import { ApiError } from './errors';
import type { NodeContext } from './context';
import { proposing } from './proposal';
import type { Rpc } from './rpc';
import * as v from './validate';

/** KV.Move (admin): binds a key, or the keys under a prefix, to another lock (docs/auth.md "Moving keys"). */
export function moveKeys(ctx: NodeContext): Rpc<MoveRequest__Output, MoveResponse__Output> {
  return proposing(ctx, {
    name: 'KV.Move',
    command: 'MoveKeys',
    fields: (req: MoveRequest__Output, caller) => {
      const toLock = v.lockName(req.toLock, 'to_lock');
      const target =
        req.what === 'key'
          ? { key: v.key(req.key) }
          : req.what === 'prefix'
            ? { prefix: v.text('prefix', req.prefix ?? '', L.MAX_KEY_BYTES, { allowEmpty: true }) }
            : undefined;
      if (target === undefined) throw new ApiError(grpc.status.INVALID_ARGUMENT, 'what: set key or prefix');
      ctx.access.permitAdmin(caller);
      return { ...target, toLock };
    },
    answers: 'keys_moved',
    response: (ok, index): MoveResponse__Output => ({ moved: intToWire('moved', ok.moved), index: intToWire('index', index ?? 0) }),
  });
}
