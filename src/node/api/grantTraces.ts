// Leader-side spans for what ends a grant with no client call (docs/tracing.md): a session's expiry and a
// revoke (an admin's Lock.Revoke, or the holder's session revoked). The node that served a grant keeps its
// Acquire span's context in memory, keyed by lock and token, so that the end joins the grant's trace. A grant
// served elsewhere (another node led then), or before this node started, gets a root span instead.
import type { EventEmitter } from 'node:events';
import { ROOT_CONTEXT, trace, type SpanContext } from '@opentelemetry/api';
import type { Command, CommandResult, GrantEndCause } from '../../state';
import { ATTR, endWith, startSpan, tracingActive } from '../../protocol/traceContext';
import type { NodeContext } from './context';
import { publicSessionId } from './publicSessionId';

/** The span each leader-decided end of a grant makes; other causes (release, close) have a client call. */
const SPAN_OF: Partial<Record<GrantEndCause, string>> = {
  expired: 'fencelock.expire',
  lock_revoked: 'fencelock.revoke',
  revoked: 'fencelock.revoke',
};

type Driver = Pick<NodeContext['driver'], 'isLeader' | 'currentTerm'>;

export class GrantTraces {
  /** `lock\0token` to the grant's Acquire span on this node; empty while tracing is off. */
  private readonly grants = new Map<string, SpanContext>();

  constructor(app: Pick<EventEmitter, 'on'>, private readonly driver: Driver) {
    app.on('applied', (index: number, _command: Command, outcome: CommandResult) => this.onApplied(index, outcome));
    // A snapshot may have ended any grant: what was kept may never see its end.
    app.on('restored', () => this.grants.clear());
  }

  /** Remembers the span that served a grant (only while tracing is on). */
  granted(lock: string, token: number, span: SpanContext | undefined): void {
    if (span === undefined || !tracingActive()) return;
    this.grants.set(key(lock, token), span);
  }

  /** How many grants' spans are kept (tests: none while tracing is off). */
  get size(): number {
    return this.grants.size;
  }

  private onApplied(index: number, outcome: CommandResult): void {
    if (this.grants.size === 0 && !tracingActive()) return;
    for (const e of outcome.events) {
      if (e.type !== 'released') continue;
      const k = key(e.lock, e.token);
      const grant = this.grants.get(k);
      this.grants.delete(k);
      const name = SPAN_OF[e.cause];
      if (name === undefined || !this.driver.isLeader() || !tracingActive()) continue;
      const parent = grant === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, grant);
      const span = startSpan(name, {
        [ATTR.lock]: e.lock,
        [ATTR.token]: String(e.token),
        [ATTR.session]: publicSessionId(e.sessionId),
        [ATTR.term]: this.driver.currentTerm(),
        [ATTR.index]: index,
      }, parent);
      endWith(span, e.cause, false);
    }
  }
}

function key(lock: string, token: number): string {
  return `${lock}\0${token}`;
}
