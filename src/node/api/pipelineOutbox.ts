import type { CallResponse } from '../../protocol/generated/fencelock/v1/CallResponse';

/**
 * The answers of one Pipeline stream on their way out. To a client that sends batches (so reads `answers`),
 * the answers ready in one turn leave as one message: the calls of one batch are proposed as one Raft
 * append and applied together, so they are usually answered together. To any other client, each answer is
 * its own message at once, as before batches existed: an older client would not read `answers`.
 */
export class AnswerOutbox {
  private queued: CallResponse[] = [];
  private flushScheduled = false;
  /** Set once the client sent a batch. */
  coalescing = false;

  constructor(
    private readonly send: (message: CallResponse) => void,
    /** Runs fn on a later turn, after everything queued in this one. */
    private readonly defer: (fn: () => void) => void,
    /** The most answers one message carries (the batch bound the node advertises). */
    private readonly maxPerMessage: number,
  ) {}

  /** Answers held here, not yet handed to the stream. */
  get size(): number {
    return this.queued.length;
  }

  push(answer: CallResponse): void {
    if (!this.coalescing) {
      this.send(answer);
      return;
    }
    this.queued.push(answer);
    if (this.queued.length >= this.maxPerMessage) {
      this.flush();
      return;
    }
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    this.defer(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  flush(): void {
    const answers = this.queued;
    if (answers.length === 0) return;
    this.queued = [];
    const [only] = answers;
    this.send(answers.length === 1 && only ? only : { answers });
  }

  /** The stream is gone: nobody to send them to. */
  drop(): void {
    this.queued = [];
  }
}
