// Small helpers to answer and to read an HTTP request, shared by the middleware and the proxy.
import type { IncomingMessage, ServerResponse } from 'node:http';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = JSON.stringify(body ?? null);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export class BodyTooLarge extends Error {}

/**
 * The whole request body, or BodyTooLarge beyond maxBytes (read before any lock or transaction is taken). A
 * declared Content-Length over the limit is refused before a byte is read. The request is never destroyed
 * here: answer it with answerTooLarge, which keeps the connection until the answer can be read.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxBytes) return reject(new BodyTooLarge(`request body of ${declared} bytes is over the limit of ${maxBytes} bytes`));
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer): void => {
      size += c.length;
      if (size <= maxBytes) return void chunks.push(c);
      req.off('data', onData);
      reject(new BodyTooLarge(`request body over the limit of ${maxBytes} bytes`));
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** How long a connection is kept, reading and discarding, after a 413 (so the client reads it instead of a reset). */
const LINGER_MS = 2_000;

/**
 * Answers 413 and closes the connection gracefully. The client may still be sending the body: closing the
 * socket with unread bytes makes the kernel send a reset, which can destroy the answer before the client
 * reads it. So the rest of the body is read and discarded, the answer is followed by a half-close (FIN), and
 * the socket is destroyed only when the client closes or after LINGER_MS.
 */
export function answerTooLarge(req: IncomingMessage, res: ServerResponse, message: string): void {
  const socket = req.socket;
  req.resume();
  // Node's server calls destroySoon() after a `Connection: close` answer; make it a lingering close instead.
  socket.destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
  sendJson(res, 413, { error: 'TOO_LARGE', message }, { connection: 'close' });
}
