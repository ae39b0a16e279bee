// gRPC by hand over node:http2, for what a hostile client does and a grpc-js client will not: leave its
// response streams unread (grpc-js keeps reading a stream's messages into its own memory whether or not the
// application reads them, so with it the node's buffers would drain into the test process), and announce a
// message far larger than the node accepts and keep sending it.
import * as http2 from 'node:http2';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

/**
 * An HTTP/2 connection to a gRPC server: TLS with the cluster's CA and client certificate from `certsDir`, or
 * plaintext without it. Resolves once the server's SETTINGS arrived.
 */
export function connectHttp2(address: string, certsDir?: string): Promise<http2.ClientHttp2Session> {
  const session = certsDir
    ? http2.connect(`https://${address}`, {
        ca: readFileSync(path.join(certsDir, 'ca.pem')),
        cert: readFileSync(path.join(certsDir, 'client.pem')),
        key: readFileSync(path.join(certsDir, 'client-key.pem')),
      })
    : http2.connect(`http://${address}`);
  return new Promise((resolve, reject) => {
    session.once('error', reject);
    session.once('remoteSettings', () => resolve(session));
  });
}

export interface CallEnd {
  /** grpc-status, or -1 when the stream closed without one (reset). */
  status: number;
  details: string;
  /** The fencelock-reason metadata, when sent. */
  reason?: string;
}

/**
 * One gRPC call on a raw HTTP/2 stream. Nothing is read from it until read() is called: its messages stay in
 * the node's buffers and HTTP/2 flow control, as with a client that stopped reading.
 */
export class RawGrpcCall {
  readonly ended: Promise<CallEnd>;
  private readonly req: http2.ClientHttp2Stream;
  private readonly end: CallEnd = { status: -1, details: '' };
  private pending = Buffer.alloc(0);

  constructor(session: http2.ClientHttp2Session, grpcPath: string) {
    this.req = session.request({ ':method': 'POST', ':path': grpcPath, 'content-type': 'application/grpc', te: 'trailers' });
    this.req.pause();
    const readStatus = (headers: http2.IncomingHttpHeaders): void => {
      if (headers['grpc-status'] !== undefined) this.end.status = Number(headers['grpc-status']);
      if (headers['grpc-message'] !== undefined) this.end.details = decodeURIComponent(String(headers['grpc-message']));
      if (headers['fencelock-reason'] !== undefined) this.end.reason = String(headers['fencelock-reason']);
    };
    this.req.on('response', readStatus);
    this.req.on('trailers', readStatus);
    this.req.on('error', () => undefined); // a reset stream: `status` stays -1 unless the node answered
    this.ended = new Promise((resolve) => this.req.once('close', () => resolve(this.end)));
  }

  /** Sends one message with its 5-byte prefix. */
  send(message: Uint8Array): void {
    this.req.write(frame(message));
  }

  /**
   * Sends `messages` in writes of `perWrite` messages, each after the previous one was taken by HTTP/2, which
   * is only as fast as the node reads (flow control). `taken()` counts the messages of completed writes.
   */
  sendPaced(messages: Uint8Array[], perWrite: number): { taken(): number } {
    let taken = 0;
    const pump = async (): Promise<void> => {
      for (let i = 0; i < messages.length && !this.req.closed; i += perWrite) {
        const batch = messages.slice(i, i + perWrite);
        await new Promise<void>((resolve) => this.req.write(Buffer.concat(batch.map(frame)), () => resolve()));
        taken += batch.length;
      }
    };
    void pump();
    return { taken: () => taken };
  }

  finish(): void {
    if (!this.req.closed) this.req.end();
  }

  /** Starts reading: each message's bytes go to `onMessage`, in order. */
  read(onMessage: (message: Buffer) => void): void {
    this.req.on('data', (chunk: Buffer) => {
      this.pending = Buffer.concat([this.pending, chunk]);
      while (this.pending.length >= 5 && this.pending.length >= 5 + this.pending.readUInt32BE(1)) {
        const size = this.pending.readUInt32BE(1);
        onMessage(this.pending.subarray(5, 5 + size));
        this.pending = this.pending.subarray(5 + size);
      }
    });
    this.req.resume();
  }

  /**
   * A message whose prefix announces `bytes` bytes, followed by those bytes in 1 MiB chunks of one reused
   * buffer (the sender holds little), until all are written or the node ends the stream; then the call's end.
   */
  async sendAnnounced(bytes: number): Promise<CallEnd & { sentBytes: number }> {
    this.read(() => undefined);
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(bytes, 1);
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    let sentBytes = 0;
    if (!this.req.write(prefix)) await this.drainedOrClosed();
    while (sentBytes < bytes && !this.req.closed && !this.req.destroyed) {
      const piece = chunk.subarray(0, Math.min(chunk.length, bytes - sentBytes));
      sentBytes += piece.length;
      if (!this.req.write(piece)) await this.drainedOrClosed();
    }
    this.finish();
    return { ...(await this.ended), sentBytes };
  }

  private drainedOrClosed(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.req.off('drain', done);
        this.req.off('close', done);
        resolve();
      };
      this.req.once('drain', done);
      this.req.once('close', done);
    });
  }
}

/** A message with its gRPC prefix: not compressed, then the length. */
function frame(message: Uint8Array): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}
