// Reads a write's body before it takes its turn, and answers 413 to one over the limit in a way the client
// can read. Closing the socket right after the answer while the client is still sending makes the kernel
// reset the connection, and a reset can throw away the 413 the client had not read yet (so does
// "Connection: close": Node then closes the socket as soon as the answer is out). So the connection stays
// open and the rest of the body is read and discarded after the answer, within a bound, then cut.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../http/send';

/** After an answer, at most this much more of the body is read and discarded before the connection is cut. */
const LINGER_BYTES = 8 << 20;
const LINGER_MS = 5_000;

/**
 * For a request answered without its body (a refusal, a 413): reads and drops the rest, so that the answer is
 * not lost to a reset, but no more than LINGER_BYTES or LINGER_MS; then the connection is cut.
 */
export function discardRest(req: IncomingMessage): void {
  if (req.readableEnded) return;
  let size = 0;
  const cut = setTimeout(() => req.socket.destroy(), LINGER_MS);
  cut.unref();
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size > LINGER_BYTES) req.socket.destroy();
  });
  req.once('end', () => clearTimeout(cut));
  req.resume();
}

/** The whole body, or undefined once a 413 has been answered (nothing of it is kept). */
export function readBodyWithin(req: IncomingMessage, res: ServerResponse, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    const refuse = (): void => {
      refused = true;
      chunks.length = 0;
      size = 0;
      sendJson(res, 413, { error: 'TOO_LARGE', message: `the request body is over the proxy's limit of ${maxBytes} bytes; nothing was forwarded` });
      discardRest(req);
      resolve(undefined);
    };
    req.on('data', (c: Buffer) => {
      if (refused) return;
      size += c.length;
      if (size > maxBytes) refuse();
      else chunks.push(c);
    });
    req.on('end', () => {
      if (!refused) resolve(Buffer.concat(chunks));
    });
    req.on('error', (err) => {
      if (!refused) reject(err);
    });
    if (declared > maxBytes) refuse();
  });
}
