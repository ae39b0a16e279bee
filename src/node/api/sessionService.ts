import * as grpc from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import * as L from '../../state/limits';
import { ApiError, notLeader } from './errors';
import { expectOk, toServiceError, unary, type NodeContext } from './context';
import * as v from './validate';

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

export function sessionService(ctx: NodeContext): grpc.UntypedServiceImplementation {
  const { config, logger } = ctx;
  const minTtl = Math.max(config.minSessionTtlMs, L.MIN_SESSION_TTL_MS);
  const maxTtl = Math.min(config.maxSessionTtlMs, L.MAX_SESSION_TTL_MS);
  return {
    Open: unary(logger, 'Session.Open', async (req: OpenReq) => {
      const id = v.header(req.header);
      const ttlMs = v.safeInteger('ttl_ms', req.ttlMs, { min: minTtl, max: maxTtl });
      const clientName = v.text('client_name', req.clientName ?? '', L.MAX_CLIENT_NAME_BYTES, { allowEmpty: true });
      // 128 random bits chosen here on the leader and carried in the entry: ids cannot be guessed.
      const sessionId = randomBytes(16).toString('hex');
      // A retry whose answer the dedup table holds is answered from it, without a new entry.
      const { result } = await ctx.proposeOrRecall({ type: 'OpenSession', ...id, now: ctx.now(), sessionId, ttlMs, clientName });
      const ok = expectOk(result);
      if (ok.status !== 'session_opened') throw new ApiError(grpc.status.INTERNAL, `unexpected result ${ok.status}`);
      return { sessionId: ok.sessionId, ttlMs: String(ok.ttlMs) };
    }),

    Close: unary(logger, 'Session.Close', async (req: CloseReq) => {
      const id = v.header(req.header);
      const sessionId = v.sessionId(req.sessionId);
      const { result } = await ctx.proposeOrRecall({ type: 'CloseSession', ...id, now: ctx.now(), sessionId });
      expectOk(result);
      return {};
    }),

    // Renewals are not log entries: the leader extends its in-memory deadline, and acknowledges only while
    // it has heard from a quorum within an election timeout (a deposed leader must not extend leases).
    KeepAlive: (call: grpc.ServerDuplexStream<KeepAliveReq, unknown>) => {
      call.on('data', (req: KeepAliveReq) => {
        try {
          const sessionId = v.sessionId(req.sessionId);
          const renewalId = req.renewalId ?? '0'; // echoed: the client credits exactly this renewal's send time
          if (!ctx.driver.isLeader()) throw notLeader(ctx.leaderAddress());
          if (!ctx.driver.isSurelyLeader()) return; // no acknowledgement: the lease is not extended
          if (!ctx.machine.getSession(sessionId)) {
            call.write({ sessionId, alive: false, remainingMs: '0', renewalId });
            return;
          }
          const remaining = ctx.leases.renew(sessionId);
          call.write({ sessionId, alive: remaining !== undefined, remainingMs: String(remaining ?? 0), renewalId });
        } catch (err) {
          call.emit('error', toServiceError(logger, 'Session.KeepAlive', err));
        }
      });
      call.on('end', () => call.end());
      call.on('error', () => undefined);
    },
  };
}
