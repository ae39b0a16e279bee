import * as http from 'node:http';
import type { Logger } from '../logger';
import type { NodeMetrics } from './nodeMetrics';

/**
 * The node's Prometheus listener: plain HTTP, GET /metrics only, apart from the client and peer listeners.
 * It serves figures (no session ids, keys or lock names), yet off loopback it should be firewalled to the
 * scraper (docs/metrics.md).
 */
export class MetricsListener {
  private constructor(private readonly server: http.Server) {}

  /** Listens on `address` (host:port); rejects with a message naming metricsListen when it cannot. */
  static async start(address: string, metrics: NodeMetrics, logger: Logger): Promise<MetricsListener> {
    const server = http.createServer((req, res) => void answer(req, res, metrics, logger));
    // A scraper that stalls must not hold a connection open for ever.
    server.requestTimeout = 10_000;
    server.headersTimeout = 10_000;
    const sep = address.lastIndexOf(':');
    const host = address.slice(0, sep).replace(/^\[|\]$/g, '');
    const port = Number(address.slice(sep + 1));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) => reject(new Error(`metricsListen: cannot listen on ${address}: ${err.message}`)));
      server.listen(port, host, () => resolve());
    });
    return new MetricsListener(server);
  }

  /** Stops listening and ends every connection, idle or not. */
  close(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

async function answer(req: http.IncomingMessage, res: http.ServerResponse, metrics: NodeMetrics, logger: Logger): Promise<void> {
  const path = (req.url ?? '').split('?')[0];
  if (path !== '/metrics') {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: metrics are at GET /metrics\n');
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { 'content-type': 'text/plain', allow: 'GET, HEAD' }).end('method not allowed: use GET /metrics\n');
    return;
  }
  try {
    const body = await metrics.scrape();
    res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(req.method === 'HEAD' ? undefined : body);
  } catch (err) {
    logger.error({ err }, 'metrics scrape failed');
    res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics scrape failed; see the node log\n');
  }
}
