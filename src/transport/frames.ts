// The frame format of the TLS framing carrier (tlsCarrier.ts). A frame is a 4-byte big-endian length, then
// that many bytes: one kind byte and the payload. The dialler speaks first with HELLO; the listener answers
// ACCEPT or REFUSE; then the dialler sends BATCH frames (one encoded MessageBatch each) and either side PINGs
// when it has been quiet; END says the sender stops in order. See docs/architecture.md#peer-frames.
import { MAX_PEER_MESSAGE_BYTES } from './limits';

export const FrameKind = {
  Hello: 1,
  Accept: 2,
  Batch: 3,
  Refuse: 4,
  End: 5,
  Ping: 6,
} as const;
export type FrameKind = (typeof FrameKind)[keyof typeof FrameKind];

export const FRAME_HEADER_BYTES = 4;
/** The largest frame body: a batch at the hard limit, plus its kind byte. */
export const MAX_FRAME_BODY_BYTES = MAX_PEER_MESSAGE_BYTES + 1;
/** HELLO and REFUSE carry a few short strings; anything longer is an attack or a bug. */
export const MAX_CONTROL_FRAME_BYTES = 4 * 1024;

export interface Frame {
  kind: FrameKind;
  payload: Buffer;
}

export class FrameError extends Error {}

export function encodeFrame(kind: FrameKind, payload: Uint8Array = new Uint8Array(0)): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + 1 + payload.byteLength);
  out.writeUInt32BE(1 + payload.byteLength, 0);
  out[FRAME_HEADER_BYTES] = kind;
  out.set(payload, FRAME_HEADER_BYTES + 1);
  return out;
}

/**
 * Cuts a byte stream into frames. Holds at most one frame's bytes (the limit is checked on the length prefix,
 * before anything of the body is kept), so a peer cannot make it buffer more than `maxBody`.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(public maxBody: number) {}

  /** Bytes of an unfinished frame held now. */
  get pending(): number {
    return this.buffered;
  }

  /** Adds bytes; returns the frames they complete. Throws FrameError on a length the limits refuse. */
  push(chunk: Buffer): Frame[] {
    this.chunks.push(chunk);
    this.buffered += chunk.byteLength;
    const frames: Frame[] = [];
    for (;;) {
      if (this.buffered < FRAME_HEADER_BYTES) break;
      const head = this.peek(FRAME_HEADER_BYTES);
      const length = head.readUInt32BE(0);
      if (length === 0) throw new FrameError('empty frame (no kind byte)');
      if (length > this.maxBody) throw new FrameError(`frame of ${length} bytes is over the ${this.maxBody} byte limit`);
      if (this.buffered < FRAME_HEADER_BYTES + length) break;
      const whole = this.take(FRAME_HEADER_BYTES + length);
      frames.push({ kind: whole[FRAME_HEADER_BYTES] as FrameKind, payload: whole.subarray(FRAME_HEADER_BYTES + 1) });
    }
    return frames;
  }

  private peek(n: number): Buffer {
    const first = this.chunks[0];
    if (first !== undefined && first.byteLength >= n) return first.subarray(0, n);
    const joined = Buffer.concat(this.chunks);
    this.chunks = [joined];
    return joined.subarray(0, n);
  }

  private take(n: number): Buffer {
    const only = this.chunks.length === 1 ? this.chunks[0] : undefined;
    const joined = only ?? Buffer.concat(this.chunks);
    this.chunks = joined.byteLength > n ? [joined.subarray(n)] : [];
    this.buffered -= n;
    return joined.subarray(0, n);
  }
}
