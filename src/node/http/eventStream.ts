// Lock.Watch as server-sent events (docs/http.md "Watch"): one `event: lock` per LockEvent (its JSON as the
// data), a comment as heartbeat, and at the end (revocation, permission lost, the stream behind, a snapshot
// replacing the node's state) one `event: error` with the status's JSON body. A refusal at the start
// (permission, quota) is a plain JSON error with its HTTP status, before any event.
import type * as http from 'node:http';
import type * as grpc from '@grpc/grpc-js';
import type { ServedMethod } from '../api/servedMethods';
import type { TimerHandle, Timers } from '../runtime/ports';
import { GatewayCall, type CallOrigin } from './gatewayCall';
import { SSE_HEARTBEAT_MS } from './httpLimits';
import { errorBody } from './httpStatus';
import { messageTypes, toJson } from './jsonCodec';

export interface EventStreamCall {
  method: ServedMethod;
  request: unknown;
  origin: CallOrigin;
  req: http.IncomingMessage;
  res: http.ServerResponse;
  timers: Timers;
  /** Answers a refusal that comes before the stream opened. */
  onRefused(err: Partial<grpc.ServiceError>): void;
}

export function serveEvents({ method, request, origin, req, res, timers, onRefused }: EventStreamCall): void {
  const eventType = messageTypes(method.definition.path).response;
  let open = false;
  let unsent = 0;
  let heartbeat: TimerHandle | undefined;
  const send = (text: string): void => {
    unsent += 1;
    res.write(text, () => {
      unsent -= 1;
    });
  };
  const call = new GatewayCall(origin, request, {
    data: (event) => send(`event: lock\ndata: ${JSON.stringify(toJson(eventType, method.definition.responseSerialize(event)))}\n\n`),
    status: (err) => {
      timers.clearTimeout(heartbeat);
      if (!open) {
        onRefused(err ?? { code: 0 });
        return;
      }
      if (err) send(`event: error\ndata: ${JSON.stringify(errorBody(err))}\n\n`);
      res.end();
    },
    unsent: () => unsent,
  });
  (method.handler as grpc.handleServerStreamingCall<unknown, unknown>)(call as never);
  if (call.destroyed) return; // refused at once: answered by onRefused
  open = true;
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' });
  send(': watching\n\n');
  const beat = (): void => {
    send(': heartbeat\n\n');
    heartbeat = timers.setTimeout(beat, SSE_HEARTBEAT_MS);
  };
  heartbeat = timers.setTimeout(beat, SSE_HEARTBEAT_MS);
  const onGone = (): void => {
    timers.clearTimeout(heartbeat);
    call.cancel();
  };
  req.socket.once('close', onGone);
  res.once('close', onGone);
}
