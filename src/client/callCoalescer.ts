import { MAX_BATCH_BYTES, MAX_CALLS_PER_BATCH } from '../protocol/limits';

/**
 * The calls of one turn, gathered into one Pipeline message (CallRequest.calls) for a node that said it
 * takes batches. Sent when the turn ends, or sooner when the batch is full (the node's bound, at most
 * MAX_CALLS_PER_BATCH calls, and MAX_BATCH_BYTES of encoded calls).
 */
export class CallCoalescer {
  private calls: Buffer[] = [];
  private bytes = 0;
  private armed = false;

  constructor(
    /** Writes one batch on the stream. */
    private readonly send: (calls: Buffer[]) => void,
    /** Runs fn on a later turn, after everything queued in this one. */
    private readonly defer: (fn: () => void) => void,
    private readonly maxCalls: number,
  ) {}

  /** How many calls wait for this turn's batch. */
  get size(): number {
    return this.calls.length;
  }

  add(call: Buffer): void {
    if (this.calls.length > 0 && this.bytes + call.length > MAX_BATCH_BYTES) this.flush();
    this.calls.push(call);
    this.bytes += call.length;
    if (this.calls.length >= Math.min(this.maxCalls, MAX_CALLS_PER_BATCH)) {
      this.flush();
      return;
    }
    if (this.armed) return;
    this.armed = true;
    this.defer(() => {
      this.armed = false;
      this.flush();
    });
  }

  flush(): void {
    if (this.calls.length === 0) return;
    const calls = this.calls;
    this.calls = [];
    this.bytes = 0;
    this.send(calls);
  }

  /** The stream they were for is gone: their calls fail with it. */
  drop(): void {
    this.calls = [];
    this.bytes = 0;
  }
}
