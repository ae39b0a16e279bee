// Test harness for the lock state machine: numbers entries, stamps `now`, picks request ids and session
// ids, and checks every invariant after each apply.
import { expect } from 'vitest';
import {
  LockStateMachine,
  decodeSnapshot,
  encodeSnapshot,
  type Command,
  type CommandResult,
  type Result,
  type WriteOp,
} from '../../src/state';

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
export const dec = (b: Uint8Array | null | undefined): string | null => (b == null ? null : new TextDecoder().decode(b));

export const put = (key: string, value: string): WriteOp => ({ type: 'put', key, value: enc(value) });
export const del = (key: string): WriteOp => ({ type: 'delete', key });

/** Deterministic session id number n: 32 lowercase hex characters. */
export const sid = (n: number): string => n.toString(16).padStart(32, '0');

/** Snapshot -> bytes -> snapshot -> machine. */
export function roundTrip(m: LockStateMachine): LockStateMachine {
  return LockStateMachine.fromSnapshot(decodeSnapshot(encodeSnapshot(m.toSnapshot())));
}

type Body<T extends Command['type']> = Omit<Extract<Command, { type: T }>, 'type' | 'clientId' | 'requestId' | 'now'> &
  Partial<{ clientId: string; requestId: number; now: number }>;

export class Harness {
  index = 0;
  now = 1_000_000;
  clientId = 'client-1';
  nextRequestId = 1;
  nextSession = 1;
  checkEachStep = true;
  /** Every command applied, with its outcome (for replays). */
  readonly history: Array<{ index: number; command: Command; outcome: CommandResult }> = [];

  constructor(public m: LockStateMachine = new LockStateMachine()) {
    this.index = m.lastApplied;
  }

  /** Applies at the next index (or `gap` further). */
  apply(command: Command, gap = 1): CommandResult {
    this.index += gap;
    const outcome = this.m.apply(this.index, command);
    this.history.push({ index: this.index, command, outcome });
    if (this.checkEachStep) expect(this.m.checkInvariants()).toEqual([]);
    return outcome;
  }

  /** A request command with fresh ids and the current time (explicit fields win). */
  req<T extends Exclude<Command['type'], 'ExpireSession' | 'Noop'>>(type: T, body: Body<T>): Command {
    return {
      type,
      clientId: this.clientId,
      requestId: this.nextRequestId++,
      now: this.tick(),
      ...body,
    } as unknown as Command;
  }

  /** Advances the clock by 10 ms and returns it (every command gets a fresh `now`). */
  tick(): number {
    this.now += 10;
    return this.now;
  }

  open(ttlMs = 10_000, clientName = 'test'): string {
    const sessionId = sid(this.nextSession++);
    const r = this.apply(this.req('OpenSession', { sessionId, ttlMs, clientName })).result;
    expect(r).toEqual({ status: 'session_opened', sessionId, ttlMs });
    return sessionId;
  }

  acquire(sessionId: string, lock: string, tryOnly = false): CommandResult {
    return this.apply(this.req('Acquire', { lock, sessionId, tryOnly, waitTimeoutMs: tryOnly ? 0 : 5_000 }));
  }

  /** Acquires a free lock and returns its token. */
  grant(sessionId: string, lock: string): number {
    const r = this.acquire(sessionId, lock).result;
    expect(r).toMatchObject({ status: 'granted' });
    return (r as Extract<Result, { status: 'granted' }>).token;
  }

  release(sessionId: string, lock: string, token: number): CommandResult {
    return this.apply(this.req('Release', { lock, sessionId, token }));
  }

  cancel(sessionId: string, lock: string): CommandResult {
    return this.apply(this.req('CancelWait', { lock, sessionId }));
  }

  write(sessionId: string, lock: string, token: number, ops: WriteOp[]): CommandResult {
    return this.apply(this.req('Write', { lock, sessionId, token, ops }));
  }

  close(sessionId: string): CommandResult {
    return this.apply(this.req('CloseSession', { sessionId }));
  }

  expire(sessionId: string): CommandResult {
    return this.apply({ type: 'ExpireSession', now: this.tick(), sessionId });
  }

  noop(): CommandResult {
    return this.apply({ type: 'Noop' });
  }

  value(key: string): string | null {
    return dec(this.m.get(key)?.value);
  }
}
