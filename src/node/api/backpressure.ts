import type { Readable, Writable } from 'node:stream';

/** What a bidirectional gRPC stream has of a Node stream (a grpc-js ServerDuplexStream is one). */
type Duplex = Pick<Readable, 'pause' | 'resume' | 'isPaused'> & Pick<Writable, 'write' | 'once'>;

/**
 * Writes an answer on a bidirectional stream and, when the stream's buffer of unsent answers is full (write()
 * returned false: the client reads slower than it is answered), stops reading its requests until the buffer
 * has drained. A client that does not read its answers is then not read from either: its requests wait in
 * HTTP/2 flow control, on its side, instead of becoming answers the node must hold.
 */
export function writeOrPause(stream: Duplex, answer: unknown): void {
  if (stream.write(answer) || stream.isPaused()) return;
  stream.pause();
  stream.once('drain', () => stream.resume());
}
