import * as grpc from '@grpc/grpc-js';
import * as L from '../../state/limits';
import type { CloseSessionRequest__Output } from '../../protocol/generated/fencelock/v1/CloseSessionRequest';
import type { CloseSessionResponse__Output } from '../../protocol/generated/fencelock/v1/CloseSessionResponse';
import type { KeepAliveRequest__Output } from '../../protocol/generated/fencelock/v1/KeepAliveRequest';
import type { KeepAliveResponse__Output } from '../../protocol/generated/fencelock/v1/KeepAliveResponse';
import type { OpenSessionRequest__Output } from '../../protocol/generated/fencelock/v1/OpenSessionRequest';
import type { OpenSessionResponse__Output } from '../../protocol/generated/fencelock/v1/OpenSessionResponse';
import { writeOrPause } from './backpressure';
import { ApiError, notLeader } from './errors';
import type { HeldGrant__Output } from '../../protocol/generated/fencelock/v1/HeldGrant';
import { toServiceError, type NodeContext } from './context';
import type { Caller } from '../auth/caller';
import { proposing } from './proposal';
import { RevokedSessions } from './revokedSessions';
import { unaryMethods, type Rpc } from './rpc';
import { sessionAdmin } from './sessionAdmin';
import type { RenewalAnswer } from '../runtime/leaderDuties';
import * as v from './validate';
import { intToWire } from '../../protocol/wireInt';

export interface SessionCalls {
  open: Rpc<OpenSessionRequest__Output, OpenSessionResponse__Output>;
  close: Rpc<CloseSessionRequest__Output, CloseSessionResponse__Output>;
  /**
   * One renewal: an acknowledgement to send, or 'no-ack' (the lease is not extended), at once or once a
   * checkpoint reset is applied; throws NOT_LEADER.
   */
  keepAlive(req: Pick<KeepAliveRequest__Output, 'sessionId' | 'renewalId'>, caller?: Caller): RenewalAnswer | Promise<RenewalAnswer>;
}

export function sessionService(ctx: NodeContext): { service: grpc.UntypedServiceImplementation; calls: SessionCalls } {
  const { config, logger } = ctx;
  const minTtl = Math.max(config.minSessionTtlMs, L.MIN_SESSION_TTL_MS);
  const maxTtl = Math.min(config.maxSessionTtlMs, L.MAX_SESSION_TTL_MS);
  const { access } = ctx;
  const revoked = new RevokedSessions(ctx.app);
  const admin = sessionAdmin(ctx);
  // A retry whose answer the dedup table holds is answered from it, without a new entry.
  const open = proposing(ctx, {
    name: 'Session.Open',
    command: 'OpenSession',
    fields: (req: OpenSessionRequest__Output, caller) => {
      const ttlMs = v.safeInteger('ttl_ms', req.ttlMs, { min: minTtl, max: maxTtl });
      const clientName = v.text('client_name', req.clientName, L.MAX_CLIENT_NAME_BYTES, { allowEmpty: true });
      const labels = v.labels(req.labels);
      // 128 random bits chosen here on the leader and carried in the entry: ids cannot be guessed.
      const sessionId = Buffer.from(ctx.ports.random.bytes(16)).toString('hex');
      access.permitUser(caller);
      // No labels: the entry is written as before labels existed.
      return labels.length === 0 ? { sessionId, ttlMs, clientName } : { sessionId, ttlMs, clientName, labels };
    },
    answers: 'session_opened',
    response: (ok): OpenSessionResponse__Output => ({
      sessionId: ok.sessionId,
      ttlMs: intToWire('ttl_ms', ok.ttlMs),
      electionTimeoutMs: intToWire('election_timeout_ms', ctx.driver.electionTimeoutMs()),
    }),
  });
  const close = proposing(ctx, {
    name: 'Session.Close',
    command: 'CloseSession',
    fields: (req: CloseSessionRequest__Output, caller) => {
      const sessionId = v.sessionId(req.sessionId);
      access.permitSession(caller, sessionId);
      return { sessionId };
    },
    answers: 'session_ended',
    response: (): CloseSessionResponse__Output => ({}),
  });
  // Renewals are not log entries: the leader extends its in-memory deadline (see LeaderDuties.renew).
  const keepAlive = (req: Pick<KeepAliveRequest__Output, 'sessionId' | 'renewalId'>, caller?: Caller): RenewalAnswer | Promise<RenewalAnswer> => {
    const sessionId = v.sessionId(req.sessionId);
    if (!ctx.driver.isLeader()) throw notLeader(ctx.leaderAddress());
    access.permitSession(caller, sessionId);
    return ctx.duties.renew(sessionId);
  };
  const service: grpc.UntypedServiceImplementation = {
    ...unaryMethods(ctx, [open, close, admin.list, admin.revoke]),
    KeepAlive: (call: grpc.ServerDuplexStream<KeepAliveRequest__Output, KeepAliveResponse__Output>) => {
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
      const send = (req: KeepAliveRequest__Output, answer: RenewalAnswer): void => {
        if (answer === 'no-ack' || call.destroyed) return;
        // The renewal id is echoed: the client credits exactly this renewal's send time. A client that does
        // not read these answers is not read from either, so its renewals cannot pile up answers here.
        const reason = !answer.alive && revoked.has(req.sessionId) ? 'REVOKED' : '';
        try {
          const remainingMs = intToWire('remaining_ms', answer.remainingMs);
          // Judged now, when the answer goes: an acknowledging leader has applied every entry of earlier terms.
          const revokedGrants = answer.alive ? endedGrants(ctx, req.sessionId, req.held) : [];
          const response: KeepAliveResponse__Output = { sessionId: req.sessionId, alive: answer.alive, remainingMs, renewalId: req.renewalId, reason, revoked: revokedGrants };
          writeOrPause(call, response);
        } catch (err) {
          // Also reached from a promise (an answer after a checkpoint reset): end the stream, never the node.
          call.emit('error', toServiceError(logger, 'Session.KeepAlive', err));
        }
      };
      call.on('data', (req: KeepAliveRequest__Output) => {
        try {
          checkHeld(req.held);
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

/** KeepAliveRequest.held: at most MAX_HELD_PER_RENEWAL grants, each a lock name and a token. */
function checkHeld(held: readonly HeldGrant__Output[]): void {
  if (held.length > L.MAX_HELD_PER_RENEWAL) throw new ApiError(grpc.status.INVALID_ARGUMENT, `held: at most ${L.MAX_HELD_PER_RENEWAL} grants per renewal, got ${held.length}`);
  held.forEach((g, i) => {
    v.lockName(g.lock, `held[${i}].lock`);
    v.token(g.token, `held[${i}].token`);
  });
}

/**
 * The grants of `held` that the open session no longer holds under their token. With the session open, only
 * its own release or an admin's revoke ends a grant, and the client names no grant it is releasing: so these
 * were revoked. Read from the replicated state, so it needs no memory of the revoke and any leader answers alike.
 */
function endedGrants(ctx: NodeContext, sessionId: string, held: readonly HeldGrant__Output[]): HeldGrant__Output[] {
  if (held.length === 0 || ctx.machine.sessionLoad(sessionId) === undefined) return [];
  return held.filter((g) => {
    const state = ctx.machine.sessionLockState(g.lock, sessionId);
    return !(state.state === 'holder' && state.token === Number(g.token));
  });
}
