import * as grpc from '@grpc/grpc-js';
import * as L from '../../state/limits';
import { writeOrPause } from './backpressure';
import { ApiError, notLeader } from './errors';
import { toServiceError, unary, type CallScope, type Handler, type NodeContext } from './context';
import type { Caller } from '../auth/caller';
import { RevokedSessions } from './revokedSessions';
import { sessionAdmin } from './sessionAdmin';
import { expectOk } from './refusals';
import type { RenewalAnswer } from '../runtime/leaderDuties';
import * as v from './validate';
import { intToWire } from '../../protocol/wireInt';

interface OpenReq {
  header?: v.WireHeader;
  ttlMs?: string;
  clientName?: string;
}
interface CloseReq {
  header?: v.WireHeader;
  sessionId?: string;
}
interface KeepAliveReq {
  sessionId?: string;
  renewalId?: string;
}

export interface SessionCalls {
  open: Handler<OpenReq, object>;
  close: Handler<CloseReq, object>;
  /**
   * One renewal: an acknowledgement to send, or 'no-ack' (the lease is not extended), at once or once a
   * checkpoint reset is applied; throws NOT_LEADER.
   */
  keepAlive(req: KeepAliveReq, caller?: Caller): RenewalAnswer | Promise<RenewalAnswer>;
}

export function sessionService(ctx: NodeContext): { service: grpc.UntypedServiceImplementation; calls: SessionCalls } {
  const { config, logger } = ctx;
  const minTtl = Math.max(config.minSessionTtlMs, L.MIN_SESSION_TTL_MS);
  const maxTtl = Math.min(config.maxSessionTtlMs, L.MAX_SESSION_TTL_MS);
  const { access } = ctx;
  const revoked = new RevokedSessions(ctx.app);
  const admin = sessionAdmin(ctx);
  const open = async (req: OpenReq, call: CallScope): Promise<object> => {
    const id = v.header(req.header);
    const ttlMs = v.safeInteger('ttl_ms', req.ttlMs, { min: minTtl, max: maxTtl });
    const clientName = v.text('client_name', req.clientName ?? '', L.MAX_CLIENT_NAME_BYTES, { allowEmpty: true });
    // 128 random bits chosen here on the leader and carried in the entry: ids cannot be guessed.
    const sessionId = Buffer.from(ctx.ports.random.bytes(16)).toString('hex');
    // A retry whose answer the dedup table holds is answered from it, without a new entry.
    access.permitUser(call.caller);
    const { result } = await ctx.proposeOrRecall({ type: 'OpenSession', ...id, ...access.stamp(call.caller), now: ctx.now(), sessionId, ttlMs, clientName });
    const ok = expectOk(result);
    if (ok.status !== 'session_opened') throw new ApiError(grpc.status.INTERNAL, `unexpected result ${ok.status}`);
    return { sessionId: ok.sessionId, ttlMs: String(ok.ttlMs), electionTimeoutMs: String(ctx.driver.electionTimeoutMs()) };
  };
  const close = async (req: CloseReq, call: CallScope): Promise<object> => {
    const id = v.header(req.header);
    const sessionId = v.sessionId(req.sessionId);
    access.permitSession(call.caller, sessionId);
    const { result } = await ctx.proposeOrRecall({ type: 'CloseSession', ...id, ...access.stamp(call.caller), now: ctx.now(), sessionId });
    expectOk(result);
    return {};
  };
  // Renewals are not log entries: the leader extends its in-memory deadline (see LeaderDuties.renew).
  const keepAlive = (req: KeepAliveReq, caller?: Caller): RenewalAnswer | Promise<RenewalAnswer> => {
    const sessionId = v.sessionId(req.sessionId);
    if (!ctx.driver.isLeader()) throw notLeader(ctx.leaderAddress());
    access.permitSession(caller, sessionId);
    return ctx.duties.renew(sessionId);
  };
  const service: grpc.UntypedServiceImplementation = {
    Open: unary(ctx, 'Session.Open', open),
    Close: unary(ctx, 'Session.Close', close),
    List: unary(ctx, 'Session.List', admin.list),
    Revoke: unary(ctx, 'Session.Revoke', admin.revoke),
    KeepAlive: (call: grpc.ServerDuplexStream<KeepAliveReq, unknown>) => {
      let caller: Caller;
      try {
        caller = access.callerOf(call);
      } catch (err) {
        call.emit('error', toServiceError(logger, 'Session.KeepAlive', err));
        return;
      }
      // A revoke ends the stream at its apply; each renewal is judged again too (Access.permitSession).
      const stopWatching = ctx.rights.watch(caller, (err) => call.emit('error', toServiceError(logger, 'Session.KeepAlive', err)));
      for (const event of ['cancelled', 'close', 'error'] as const) call.on(event, stopWatching);
      const send = (req: KeepAliveReq, answer: RenewalAnswer): void => {
        if (answer === 'no-ack' || call.destroyed) return;
        // The renewal id is echoed: the client credits exactly this renewal's send time. A client that does
        // not read these answers is not read from either, so its renewals cannot pile up answers here.
        const reason = !answer.alive && req.sessionId !== undefined && revoked.has(req.sessionId) ? 'REVOKED' : '';
        try {
          const remainingMs = intToWire('remaining_ms', answer.remainingMs);
          writeOrPause(call, { sessionId: req.sessionId, alive: answer.alive, remainingMs, renewalId: req.renewalId ?? '0', reason });
        } catch (err) {
          // Also reached from a promise (an answer after a checkpoint reset): end the stream, never the node.
          call.emit('error', toServiceError(logger, 'Session.KeepAlive', err));
        }
      };
      call.on('data', (req: KeepAliveReq) => {
        try {
          const answer = keepAlive(req, caller);
          if (answer instanceof Promise) void answer.then((a) => send(req, a));
          else send(req, answer);
        } catch (err) {
          call.emit('error', toServiceError(logger, 'Session.KeepAlive', err));
        }
      });
      call.on('end', () => call.end());
      call.on('error', () => undefined);
    },
  };
  return { service, calls: { open, close, keepAlive } };
}
