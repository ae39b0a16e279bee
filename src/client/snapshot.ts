import { createHash } from 'node:crypto';
import { FenceLockError, toFenceLockError } from './errors';
import type { SnapshotChunk__Output } from '../protocol/generated/fencelock/v1/SnapshotChunk';
import { wireToBigInt } from '../protocol/wireInt';
import { methods } from './proto';
import { nextBackoff, type Router } from './router';

/** What a backup is of: its header, sent by the leader before the data. */
export interface SnapshotInfo {
  /** The applied log index the state is of: every write acknowledged before the call is in it. */
  index: bigint;
  /** The term of the entry at `index`. */
  term: bigint;
  /** Bytes of data that follow. */
  size: number;
  /** SHA-256 of the data, checked by the library once it has all arrived. */
  sha256: Buffer;
  /** The cluster's members. */
  voters: string[];
}

/** Where a backup's bytes go, in order; the stream waits for each returned promise (flow control). */
export interface SnapshotSink {
  header(info: SnapshotInfo): void | Promise<void>;
  data(chunk: Buffer): void | Promise<void>;
}

/**
 * Streams a backup from the leader into `sink` (Cluster.Snapshot). Until the header arrives, a node that
 * does not lead sends the call on to the leader (its hint) and a failed attempt is retried elsewhere, within
 * `totalTimeoutMs`; once data flows, a broken stream fails the call, and the caller starts again.
 */
export async function streamSnapshot(router: Router, sink: SnapshotSink, totalTimeoutMs: number): Promise<SnapshotInfo> {
  const clock = router.ports.clock;
  const deadline = clock.monotonicMs() + totalTimeoutMs;
  let backoff = 0;
  let hints = 0;
  let attempts = 0;
  const byEndpoint = new Map<string, FenceLockError>();
  for (;;) {
    const address = router.current();
    const attempt = new SnapshotAttempt(router, address, sink);
    attempts++;
    try {
      return await attempt.run();
    } catch (raw) {
      const err = raw instanceof FenceLockError ? raw : toFenceLockError(raw, `snapshot (via ${address})`);
      if (attempt.started || err.code !== 'UNAVAILABLE' || router.isClosed()) throw err;
      byEndpoint.set(address, err);
      if (clock.monotonicMs() >= deadline) throw router.gaveUp('snapshot', attempts, totalTimeoutMs, err, byEndpoint);
      if (err.leader && err.leader !== address && hints <= router.knownEndpoints().length && router.noteLeader(err.leader)) {
        hints++;
        continue;
      }
      hints = 0;
      router.rotateFrom(address);
      backoff = nextBackoff(backoff);
      await router.sleep(Math.min(backoff, Math.max(0, deadline - clock.monotonicMs())));
    }
  }
}

/** One Cluster.Snapshot call to one node. */
class SnapshotAttempt {
  /** The header arrived: the sink has been written to, so the call can no longer be retried quietly. */
  started = false;
  private info: SnapshotInfo | undefined;
  private received = 0;
  private readonly hash = createHash('sha256');

  constructor(
    private readonly router: Router,
    private readonly address: string,
    private readonly sink: SnapshotSink,
  ) {}

  run(): Promise<SnapshotInfo> {
    const m = methods().Cluster.Snapshot;
    const call = this.router.serverStream(this.address, m, {});
    return new Promise<SnapshotInfo>((resolve, reject) => {
      let failed = false;
      const fail = (err: unknown): void => {
        if (failed) return;
        failed = true;
        call.cancel();
        reject(err instanceof FenceLockError ? err : toFenceLockError(err, `snapshot (via ${this.address})`));
      };
      // Each message is handed to the sink with the stream paused: a slow disk slows the node's sending.
      let chain = Promise.resolve();
      call.on('data', (msg: SnapshotChunk__Output) => {
        call.pause();
        chain = chain.then(() => this.take(msg)).then(() => void call.resume(), fail);
      });
      call.on('error', fail);
      call.on('end', () => {
        chain.then(() => resolve(this.finish()), fail).catch(fail);
      });
    });
  }

  private async take(msg: SnapshotChunk__Output): Promise<void> {
    if (this.info === undefined) {
      if (!msg.header) throw new FenceLockError('DATA_LOSS', `snapshot (via ${this.address}): the stream did not start with a header`);
      const h = msg.header;
      this.info = { index: wireToBigInt(h.index), term: wireToBigInt(h.term), size: Number(h.size), sha256: Buffer.from(h.sha256), voters: [...h.voters] };
      this.started = true;
      await this.sink.header(this.info);
      return;
    }
    this.received += msg.data.length;
    if (this.received > this.info.size) throw new FenceLockError('DATA_LOSS', `snapshot (via ${this.address}): more data than the ${this.info.size} bytes announced`);
    this.hash.update(msg.data);
    await this.sink.data(msg.data);
  }

  /** The stream ended: whole and intact, or DATA_LOSS. */
  private finish(): SnapshotInfo {
    const info = this.info;
    if (info === undefined) throw new FenceLockError('DATA_LOSS', `snapshot (via ${this.address}): the stream ended before its header`);
    if (this.received !== info.size) throw new FenceLockError('DATA_LOSS', `snapshot (via ${this.address}): ${this.received} of ${info.size} bytes arrived`);
    if (!this.hash.digest().equals(info.sha256)) throw new FenceLockError('DATA_LOSS', `snapshot (via ${this.address}): the data does not match its SHA-256`);
    return info;
  }
}
