import * as grpc from '@grpc/grpc-js';
import { EventEmitter } from 'node:events';
import type { Logger } from '../logger';
import { ApiError } from './errors';
import { toServiceError, type Handler } from './context';

/** Calls that may travel on the Pipeline stream: the oneof field names of CallRequest. */
export type PipelineCall = 'acquire' | 'release' | 'write' | 'get';

/** Calls in flight on one stream; beyond it a call is refused, so one client cannot pile up unbounded work. */
export const MAX_CALLS_IN_FLIGHT_PER_STREAM = 4_096;

interface CallRequest {
  callId?: string;
  timeoutMs?: number;
  call?: PipelineCall;
  acquire?: unknown;
  release?: unknown;
  write?: unknown;
  get?: unknown;
}

interface CallResponse {
  callId: string;
  code: number;
  message: string;
  metadata: Record<string, string>;
  [result: string]: unknown;
}

/** A call waiting for its answer: its cancellation scope, and its deadline timer when it has one. */
interface InFlightCall {
  scope: EventEmitter;
  timer?: NodeJS.Timeout;
}

const RPC_NAMES: Record<PipelineCall, string> = { acquire: 'Lock.Acquire', release: 'Lock.Release', write: 'KV.Write', get: 'KV.Get' };

/**
 * Pipeline.Calls: each CallRequest runs the same handler as its unary twin and answers with one CallResponse.
 * A call's scope says 'cancelled' when its deadline passes or the stream goes away, as a unary call would.
 */
export function pipelineService(
  logger: Logger,
  calls: Record<PipelineCall, Handler<unknown, object>>,
  maxInFlight = MAX_CALLS_IN_FLIGHT_PER_STREAM,
): grpc.UntypedServiceImplementation {
  return {
    Calls: (stream: grpc.ServerDuplexStream<CallRequest, CallResponse>) => {
      const inFlight = new Map<string, InFlightCall>();
      let open = true;
      let clientDone = false;

      const finish = (callId: string, response: CallResponse): void => {
        const entry = inFlight.get(callId);
        if (!entry) return; // already answered (deadline) or the stream is gone
        inFlight.delete(callId);
        if (entry.timer) clearTimeout(entry.timer);
        if (open) stream.write(response);
        if (clientDone && inFlight.size === 0 && open) stream.end();
      };
      const fail = (callId: string, err: unknown, rpc: string): void => {
        const se = toServiceError(logger, rpc, err);
        finish(callId, { callId, code: se.code ?? grpc.status.UNKNOWN, message: se.details ?? '', metadata: metadataRecord(se.metadata) });
      };
      const goneAway = (): void => {
        open = false;
        for (const { scope, timer } of inFlight.values()) {
          if (timer) clearTimeout(timer);
          scope.emit('cancelled');
        }
        inFlight.clear();
      };

      stream.on('data', (req: CallRequest) => {
        const callId = req.callId ?? '0';
        const kind = req.call;
        const scope = new EventEmitter();
        if (inFlight.has(callId)) {
          // Answering would be ambiguous: the client could not tell which of the two the answer is for.
          stream.write({ callId, code: grpc.status.INVALID_ARGUMENT, message: `call_id ${callId} is already in flight on this stream`, metadata: {} });
          return;
        }
        const entry: InFlightCall = { scope };
        inFlight.set(callId, entry);
        if (!kind || !(kind in calls)) {
          fail(callId, new ApiError(grpc.status.INVALID_ARGUMENT, 'call: set one of acquire, release, write, get'), 'Pipeline.Calls');
          return;
        }
        const rpc = RPC_NAMES[kind];
        if (inFlight.size > maxInFlight) {
          fail(callId, new ApiError(grpc.status.RESOURCE_EXHAUSTED, `more than ${maxInFlight} calls in flight on one stream; wait for answers`), rpc);
          return;
        }
        // A timer beyond 2^31 - 1 ms would fire at once: such a deadline is as good as none.
        const timeoutMs = Math.min(req.timeoutMs ?? 0, 2 ** 31 - 1);
        if (timeoutMs > 0) {
          entry.timer = setTimeout(() => {
            scope.emit('cancelled');
            fail(callId, new ApiError(grpc.status.DEADLINE_EXCEEDED, `${rpc}: deadline of ${timeoutMs} ms exceeded`), rpc);
          }, timeoutMs);
        }
        // Called synchronously, so calls that arrive in order are proposed in order.
        let pending: Promise<object>;
        try {
          pending = calls[kind](req[kind], scope);
        } catch (err) {
          fail(callId, err, rpc);
          return;
        }
        pending.then(
          (result) => finish(callId, { callId, code: grpc.status.OK, message: '', metadata: {}, [kind]: result }),
          (err: unknown) => fail(callId, err, rpc),
        );
      });
      stream.on('end', () => {
        clientDone = true;
        if (inFlight.size === 0 && open) stream.end();
      });
      stream.on('cancelled', goneAway);
      stream.on('error', goneAway);
      stream.on('close', goneAway);
    },
  };
}

function metadataRecord(md: grpc.Metadata | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!md) return out;
  for (const [k, v] of Object.entries(md.getMap())) out[k] = typeof v === 'string' ? v : v.toString();
  return out;
}
