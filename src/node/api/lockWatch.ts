import type { Caller } from '../auth/caller';
import * as grpc from '@grpc/grpc-js';
import type { Command, CommandResult, LockEvent } from '../../state';
import { ApiError, reasonMetadata } from './errors';
import { toServiceError, type NodeContext } from './context';
import { publicSessionId } from './publicSessionId';
import { sessionInfo } from './sessionInfo';
import type { SessionInfo__Output } from '../../protocol/generated/fencelock/v1/SessionInfo';
import { MAX_WATCH_BACKLOG_EVENTS } from './streamLimits';
import * as v from './validate';
import type { LockEvent__Output } from '../../protocol/generated/fencelock/v1/LockEvent';
import type { WatchRequest__Output } from '../../protocol/generated/fencelock/v1/WatchRequest';
import { intToWire } from '../../protocol/wireInt';

type WatchCall = grpc.ServerWritableStream<WatchRequest__Output, LockEvent__Output>;

/**
 * Lock.Watch: the lock's events (or a semaphore's permits', WatchRequest.semaphore) as this node applies them,
 * so any node can serve a watch. A stream ends
 * rather than going silently wrong: ABORTED (EVENTS_MISSED) when a snapshot replaced this node's state, and
 * RESOURCE_EXHAUSTED (WATCH_BEHIND) when the client has `maxBacklog` events unsent, so that a reader that
 * stopped reading cannot make the node keep every event of the lock for it. Either way the client calls
 * Describe and watches again.
 */
export function lockWatch(ctx: NodeContext, maxBacklog = MAX_WATCH_BACKLOG_EVENTS): grpc.handleServerStreamingCall<WatchRequest__Output, LockEvent__Output> {
  const { logger } = ctx;
  return (call: WatchCall) => {
    let target: WatchTarget;
    let caller: Caller;
    try {
      target = targetOf(call.request);
      caller = ctx.access.callerOf(call);
      ctx.access.permit(caller, 'lock', target.name);
    } catch (err) {
      call.emit('error', toServiceError(logger, 'Lock.Watch', err));
      return;
    }
    const end = (err: ApiError): void => {
      stop();
      call.emit('error', toServiceError(logger, 'Lock.Watch', err));
    };
    const onApplied = (index: number, command: Command, outcome: CommandResult): void => {
      // A revoke ends the watches it no longer allows.
      if (command.type === 'AuthChange' && !stillAllowed()) return;
      for (const e of outcome.events) {
        if (!isWatched(e) || nameOf(e) !== target.name || isPermit(e) !== target.permits) continue;
        if (call.writableLength >= maxBacklog) {
          end(fellBehind(call.writableLength, maxBacklog, index));
          return;
        }
        call.write(messageOf(ctx, e, index));
      }
    };
    // A snapshot from the leader replaces this node's state: the entries it covers are never applied here, so
    // their events are lost to this stream. It ends, saying so, rather than staying open and silent.
    const onRestored = (): void => {
      const message = `${target.permits ? 'semaphore' : 'lock'} events up to log index ${ctx.machine.lastApplied} were not sent: this node replaced its state by a snapshot from the leader; call Describe to read the lock's current state, and Watch again for what follows`;
      end(new ApiError(grpc.status.ABORTED, message, reasonMetadata('EVENTS_MISSED')));
    };
    const wasUser = ctx.access.isUser(caller);
    const stillAllowed = (): boolean => {
      try {
        const lost = ctx.access.lost(caller, wasUser);
        if (lost !== undefined) throw lost;
        ctx.access.permit(caller, 'lock', target.name);
        return true;
      } catch (err) {
        end(err as ApiError);
        return false;
      }
    };
    ctx.app.on('applied', onApplied);
    ctx.app.on('restored', onRestored);
    const stop = (): void => {
      ctx.app.off('applied', onApplied);
      ctx.app.off('restored', onRestored);
    };
    call.on('cancelled', stop);
    call.on('close', stop);
    call.on('error', stop);
  };
}

/**
 * Each event's message, made once for every watch of its lock: what a watch has unsent are then references
 * to shared messages, not copies, and the session's public id is hashed once.
 */
const messages = new WeakMap<LockEvent, LockEvent__Output>();

function messageOf(ctx: NodeContext, e: WatchedEvent, index: number): LockEvent__Output {
  let message = messages.get(e);
  if (!message) {
    const handle = publicSessionId(e.sessionId);
    const revoked = e.type === 'released' && e.cause === 'lock_revoked';
    message = {
      kind: kindName(e),
      lock: isPermit(e) ? '' : e.lock,
      sessionId: handle,
      token: intToWire('token', e.token),
      index: intToWire('index', index),
      holder: holderOf(ctx, e, handle),
      revokedBy: revoked ? (e.revokedBy ?? '') : '',
      reason: revoked ? (e.reason ?? '') : '',
      semaphore: isPermit(e) ? e.semaphore : '',
      slot: isPermit(e) ? e.slot : 0,
      shared: !isPermit(e) && e.shared === true,
    };
    messages.set(e, message);
  }
  return message;
}

/**
 * A grant's new holder as the watch shows it. Read as the entry is applied, so the session is there unless the
 * same entry ended it after the grant (then the handle alone).
 */
function holderOf(ctx: NodeContext, e: WatchedEvent, handle: string): SessionInfo__Output | null {
  if (e.type !== 'granted' && e.type !== 'permit_granted') return null;
  const facts = ctx.machine.sessionFacts(e.sessionId) ?? { clientName: '', labels: [] };
  return sessionInfo({ sessionId: e.sessionId, ...facts }, handle);
}

/** The end of a watch whose client left `unsent` events unread; the event of entry `index` was the one too many. */
function fellBehind(unsent: number, maxBacklog: number, index: number): ApiError {
  return new ApiError(
    grpc.status.RESOURCE_EXHAUSTED,
    `this watch fell ${unsent} events behind (a node keeps at most ${maxBacklog} unsent events per watch); events from log index ${index} on were not sent: read events as they come, call Describe to read the lock's current state, and Watch again`,
    reasonMetadata('WATCH_BEHIND'),
  );
}

type WatchedEvent = Extract<LockEvent, { type: 'granted' | 'released' | 'permit_granted' | 'permit_released' }>;
type PermitChange = Extract<WatchedEvent, { type: 'permit_granted' | 'permit_released' }>;

/** What one stream watches: a lock, or a semaphore's permits (a namespace of their own: the same name is two resources). */
interface WatchTarget {
  name: string;
  permits: boolean;
}

function targetOf(req: WatchRequest__Output): WatchTarget {
  if (req.semaphore === '') return { name: v.lockName(req.lock), permits: false };
  if (req.lock !== '') throw new ApiError(grpc.status.INVALID_ARGUMENT, 'lock and semaphore: set exactly one (the lock or the semaphore to watch)');
  return { name: v.lockName(req.semaphore, 'semaphore'), permits: true };
}

/** Grants and releases (of locks or of permits) are what a watch sends; queueing and wait endings are not. */
function isWatched(e: LockEvent): e is WatchedEvent {
  return e.type === 'granted' || e.type === 'released' || e.type === 'permit_granted' || e.type === 'permit_released';
}

function isPermit(e: WatchedEvent): e is PermitChange {
  return e.type === 'permit_granted' || e.type === 'permit_released';
}

function nameOf(e: WatchedEvent): string {
  return isPermit(e) ? e.semaphore : e.lock;
}

function kindName(e: WatchedEvent): LockEvent__Output['kind'] {
  if (e.type === 'granted' || e.type === 'permit_granted') return 'GRANTED';
  if (e.cause === 'lock_revoked') return 'REVOKED';
  return e.cause === 'expired' ? 'EXPIRED' : 'RELEASED';
}
