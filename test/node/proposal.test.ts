// The shared wrapper of the regular RPCs (src/node/api/proposal.ts): what it checks, what it proposes, and how
// it answers, for any declaration. The services' own behaviour over gRPC is in test/contract and test/security.
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { NodeContext } from '../../src/node/api/context';
import { ApiError } from '../../src/node/api/errors';
import { proposing, type Proposal } from '../../src/node/api/proposal';
import { unaryMethods } from '../../src/node/api/rpc';
import { Reason, type RequestCommand, type Result } from '../../src/state';
import type { RequestHeader__Output } from '../../src/protocol/generated/fencelock/v1/RequestHeader';
import { intToWire } from '../../src/protocol/wireInt';

interface CloseReq {
  header: RequestHeader__Output | null;
  sessionId: string;
}

const SESSION = 'a'.repeat(32);
const HEADER = { clientId: 'c', requestId: '7', ackedBelow: '3' };

/** A context that records what is proposed and answers with `result` (or a stored one, when given). */
function fakeContext(result: Result, stored?: Result): { ctx: NodeContext; proposed: RequestCommand[]; recalled: boolean[] } {
  const proposed: RequestCommand[] = [];
  const recalled: boolean[] = [];
  const ctx = {
    now: () => 1_234,
    access: { stamp: (caller?: { identity: string }) => ({ caller: caller?.identity ?? '' }) },
    proposeOrRecall: async (command: RequestCommand, usable: (r: Result) => boolean = () => true) => {
      if (stored !== undefined && usable(stored)) {
        recalled.push(true);
        return { result: stored };
      }
      proposed.push(command);
      return { index: 42, result };
    },
  };
  return { ctx: ctx as unknown as NodeContext, proposed, recalled };
}

function close(overrides: Partial<Proposal<CloseReq, { released: string; index: string }, 'CloseSession', 'session_ended'>> = {}) {
  return {
    name: 'Session.Close',
    command: 'CloseSession' as const,
    fields: (req: CloseReq) => {
      if (req.sessionId === '') throw new ApiError(grpc.status.INVALID_ARGUMENT, 'session_id: is required');
      return { sessionId: req.sessionId };
    },
    answers: 'session_ended' as const,
    response: (ok: { released: string[] }, index: number | undefined) => ({ released: ok.released.join(','), index: intToWire('index', index ?? 0) }),
    ...overrides,
  };
}

const ended: Result = { status: 'session_ended', sessionId: SESSION, cause: 'closed', released: ['a', 'b'] };
const scope = { on: () => undefined, off: () => undefined, caller: { identity: 'alice', via: 'certificate' as const } };

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('expected a rejection');
}

describe('proposing: one wrapper for every regular RPC', () => {
  it('proposes the declared command with the header identity, the caller stamp, the time and the declared fields', async () => {
    const { ctx, proposed } = fakeContext(ended);
    const rpc = proposing(ctx, close());
    await expect(rpc.handle({ header: HEADER, sessionId: SESSION }, scope)).resolves.toEqual({ released: 'a,b', index: '42' });
    expect(proposed).toEqual([{ type: 'CloseSession', clientId: 'c', requestId: 7, ackedBelow: 3, caller: 'alice', now: 1_234, sessionId: SESSION }]);
    expect(rpc.name).toBe('Session.Close');
  });

  it('checks the header before the fields, and proposes nothing for a bad request', async () => {
    const { ctx, proposed } = fakeContext(ended);
    const rpc = proposing(ctx, close());
    const noHeader = await rejection(rpc.handle({ header: null, sessionId: '' }, scope));
    expect([noHeader.code, noHeader.message]).toEqual([grpc.status.INVALID_ARGUMENT, 'header: is required (client_id and request_id make retries safe)']);
    const noSession = await rejection(rpc.handle({ header: HEADER, sessionId: '' }, scope));
    expect(noSession.message).toBe('session_id: is required');
    expect(proposed).toEqual([]);
  });

  it('answers a refusal with its status, reason and watermark, unless the declaration withholds it', async () => {
    const refused: Result = { status: 'refused', reason: Reason.NOT_HOLDER, watermark: 9 };
    const plain = await rejection(proposing(fakeContext(refused).ctx, close()).handle({ header: HEADER, sessionId: SESSION }, scope));
    expect([plain.code, plain.metadata]).toEqual([grpc.status.FAILED_PRECONDITION, { 'fencelock-reason': 'NOT_HOLDER', 'fencelock-watermark': '9' }]);
    const withheld = new ApiError(grpc.status.FAILED_PRECONDITION, 'withheld', { 'fencelock-reason': 'NOT_HOLDER' });
    const seen: unknown[] = [];
    const decl = close({ withhold: (r, fields, caller) => (seen.push([r.reason, fields, caller?.identity]), withheld) });
    const hidden = await rejection(proposing(fakeContext(refused).ctx, decl).handle({ header: HEADER, sessionId: SESSION }, scope));
    expect(hidden).toBe(withheld);
    expect(seen).toEqual([['NOT_HOLDER', { sessionId: SESSION }, 'alice']]);
  });

  it('answers INTERNAL for a result other than the declared one, and INVALID_ARGUMENT for an invalid command', async () => {
    const odd = await rejection(proposing(fakeContext({ status: 'keys_moved', moved: 1 }).ctx, close()).handle({ header: HEADER, sessionId: SESSION }, scope));
    expect([odd.code, odd.message]).toEqual([grpc.status.INTERNAL, 'unexpected result keys_moved']);
    const invalid = await rejection(proposing(fakeContext({ status: 'invalid', message: 'bad' }).ctx, close()).handle({ header: HEADER, sessionId: SESSION }, scope));
    expect([invalid.code, invalid.message]).toEqual([grpc.status.INVALID_ARGUMENT, 'bad']);
  });

  it('recalls a stored answer only when the declaration accepts it (the recalled answer has no new index)', async () => {
    const stored: Result = { ...ended, released: ['old'] };
    const any = fakeContext(ended, stored);
    await expect(proposing(any.ctx, close()).handle({ header: HEADER, sessionId: SESSION }, scope)).resolves.toEqual({ released: 'old', index: '0' });
    expect([any.recalled, any.proposed]).toEqual([[true], []]);
    const picky = fakeContext(ended, stored);
    await expect(proposing(picky.ctx, close({ recall: (r) => r.status !== 'session_ended' })).handle({ header: HEADER, sessionId: SESSION }, scope)).resolves.toEqual({ released: 'a,b', index: '42' });
    expect(picky.proposed).toHaveLength(1);
  });
});

describe('unaryMethods', () => {
  it('serves each declaration under its method name', () => {
    const { ctx } = fakeContext(ended);
    const methods = unaryMethods(ctx, [proposing(ctx, close()), { name: 'KV.Get', handle: async () => ({}) }]);
    expect(Object.keys(methods)).toEqual(['Close', 'Get']);
  });

  it('refuses a declaration whose name is not Service.Method', () => {
    const { ctx } = fakeContext(ended);
    expect(() => unaryMethods(ctx, [{ name: 'Close', handle: async () => ({}) }])).toThrow(/rpc: Close is not Service.Method/);
  });
});
