// The regular RPC: one replicated command per call, de-duplicated by the request's header. A declaration
// names the command, how the request maps to its fields (validating them and checking the caller's rights)
// and how its result maps to the response; `proposing` does the rest the same way for every such RPC.
import { type Span } from '@opentelemetry/api';
import { ATTR } from '../../protocol/traceContext';
import * as grpc from '@grpc/grpc-js';
import type { RefusedResult, RequestCommand, RequestMeta, Result, ResultStatus } from '../../state';
import type { RequestHeader__Output } from '../../protocol/generated/fencelock/v1/RequestHeader';
import type { Caller } from '../auth/caller';
import type { NodeContext } from './context';
import { ApiError } from './errors';
import { expectOk } from './refusals';
import type { Rpc } from './rpc';
import * as v from './validate';

type CommandOf<K extends RequestCommand['type']> = Extract<RequestCommand, { type: K }>;

/** A command's own fields: all but its type, the request's identity, the caller's stamp and the time. */
export type CommandFields<K extends RequestCommand['type']> = Omit<CommandOf<K>, keyof RequestMeta | 'type'>;

export interface Proposal<Req extends { header: RequestHeader__Output | null }, Res, K extends RequestCommand['type'], S extends ResultStatus> {
  /** Service.Method. */
  readonly name: string;
  readonly command: K;
  /** Validates the request's fields (its header is checked first) and the caller's rights: the command's fields. */
  fields(req: Req, caller: Caller | undefined): CommandFields<K>;
  /** The result a success is; any other is INTERNAL. */
  readonly answers: S;
  /** The response to a success; `index`: the new entry's, when one was proposed (none: a recalled answer). */
  response(ok: Extract<Result, { status: S }>, index: number | undefined, fields: CommandFields<K>): Res;
  /** Whether a stored result may answer a retry without a new entry (default: any may). */
  recall?(stored: Result): boolean;
  /** The refusal as this caller may see it, when it may not see all of it (docs/auth.md "Refusals"). */
  withhold?(refused: RefusedResult, fields: CommandFields<K>, caller: Caller | undefined): ApiError | undefined;
}

/**
 * The RPC of a declaration: header, fields and rights checked before anything is proposed; the command
 * proposed as the caller (or its stored answer recalled); a refusal answered as its status and metadata
 * (refusals.ts), withheld in part where the declaration says so.
 */
export function proposing<Req extends { header: RequestHeader__Output | null }, Res, K extends RequestCommand['type'], S extends ResultStatus>(
  ctx: NodeContext,
  p: Proposal<Req, Res, K, S>,
): Rpc<Req, Res> {
  const handle = async (req: Req, call: { readonly caller?: Caller; readonly span?: Span }): Promise<Res> => {
    const id = v.header(req.header);
    const fields = p.fields(req, call.caller);
    const command = { type: p.command, ...id, ...ctx.access.stamp(call.caller), now: ctx.now(), ...fields } as unknown as CommandOf<K>;
    const { index, result } = await ctx.proposeOrRecall(command, p.recall?.bind(p));
    if (call.span !== undefined) traceApply(ctx, call.span, command, index, result);
    const withheld = result.status === 'refused' ? p.withhold?.(result, fields, call.caller) : undefined;
    if (withheld !== undefined) throw withheld;
    const ok = expectOk(result);
    if (!isStatus(ok, p.answers)) throw new ApiError(grpc.status.INTERNAL, `unexpected result ${ok.status}`);
    return p.response(ok, index, fields);
  };
  return { name: p.name, handle };
}

/** The applied command on the call's span: lock, token, the entry's index, the leader's term and the result. */
function traceApply(ctx: NodeContext, span: Span, command: object, index: number | undefined, result: Result): void {
  const c = command as { type: string; lock?: unknown; token?: unknown; ops?: unknown[] };
  span.setAttribute('fencelock.command', c.type);
  if (typeof c.lock === 'string') span.setAttribute(ATTR.lock, c.lock);
  if (typeof c.token === 'number') span.setAttribute(ATTR.token, String(c.token));
  if (Array.isArray(c.ops)) span.setAttribute(ATTR.keys, c.ops.length);
  if (index !== undefined) span.setAttribute(ATTR.index, index);
  span.setAttribute(ATTR.term, ctx.driver.currentTerm());
  span.setAttribute(ATTR.result, result.status === 'refused' ? result.reason : result.status);
}

function isStatus<S extends ResultStatus>(result: Result, status: S): result is Extract<Result, { status: S }> {
  return result.status === status;
}
