// A resource that gets the fencing rule wrong, for check-resource to catch: it keeps a watermark per path in
// memory and accepts `fence <= token` (a retry or a repeated step runs again), checking the lock like a
// correct one would. It answers like the fencing middleware: 2xx when applied, 409 {error} when refused.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BrokenResource {
  url: string;
  /** How many writes it applied. */
  applied: number;
  close(): Promise<void>;
}

export async function startLenientResource(): Promise<BrokenResource> {
  const marks = new Map<string, { lock: string; fence: bigint }>();
  const svc = { applied: 0 } as BrokenResource;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const token = BigInt(String(req.headers['fencing-token'] ?? '0'));
      const lock = String(req.headers['fencing-lock'] ?? '');
      const path = req.url ?? '/';
      const mark = marks.get(path);
      const refuse = (error: string): void => {
        res.writeHead(409, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error }));
      };
      if (mark && mark.lock !== lock) return refuse('WRONG_LOCK');
      // The bug: `<=` lets the same token through again, whatever its step or operation id.
      if (mark && !(mark.fence <= token)) return refuse('STALE');
      marks.set(path, { lock, fence: token });
      svc.applied++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  svc.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  svc.close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return svc;
}
