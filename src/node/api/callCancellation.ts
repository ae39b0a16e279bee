import type { Caller } from '../auth/caller';
import type { CallScope } from './context';

/**
 * The scope of one Pipeline call: says 'cancelled' once (deadline passed, stream gone). An EventEmitter per
 * call did the same with more to allocate and look up; a call has at most a listener or two.
 */
export class CallCancellation implements CallScope {
  private listeners: Array<() => void> | undefined;
  private cancelled = false;

  constructor(readonly caller: Caller | undefined) {}

  on(_event: 'cancelled', listener: () => void): this {
    if (!this.cancelled) (this.listeners ??= []).push(listener);
    return this;
  }

  off(_event: 'cancelled', listener: () => void): this {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners?.splice(at, 1);
    return this;
  }

  /** Tells the listeners, once. */
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    const listeners = this.listeners;
    this.listeners = undefined;
    for (const listener of listeners ?? []) listener();
  }
}
