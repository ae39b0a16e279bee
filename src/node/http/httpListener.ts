// The HTTP listener (config `httpListen`, docs/http.md): the JSON gateway and its event streams, and the web
// dashboard's static files (docs/dashboard.md), over TLS with the node's client-facing certificate and the
// gRPC listener's client-certificate policy (requested always, required with clientCertAuth), or plaintext
// only where gRPC is plaintext (`insecure`, loopback).
import * as http from 'node:http';
import * as https from 'node:https';
import type { Socket } from 'node:net';
import type { CertificateFiles } from '../tls/certificateFiles';
import type { Logger } from '../logger';
import { DashboardAssets } from './dashboardAssets';
import { Gateway, type GatewayDeps } from './gateway';
import {
  HTTP_DEADLINE_CHECK_MS,
  HTTP_HEADERS_TIMEOUT_MS,
  HTTP_KEEPALIVE_IDLE_MS,
  HTTP_REQUEST_TIMEOUT_MS,
  HTTP_TLS_HANDSHAKE_TIMEOUT_MS,
  MAX_HTTP_CONNECTIONS,
  MAX_HTTP_HEADER_BYTES,
} from './httpLimits';

export interface HttpListenerOptions {
  address: string;
  certificates: CertificateFiles | null;
  clientCertAuth: boolean;
  logger: Logger;
}

const SERVER_OPTIONS: http.ServerOptions = {
  maxHeaderSize: MAX_HTTP_HEADER_BYTES,
  headersTimeout: HTTP_HEADERS_TIMEOUT_MS,
  requestTimeout: HTTP_REQUEST_TIMEOUT_MS,
  keepAliveTimeout: HTTP_KEEPALIVE_IDLE_MS,
  connectionsCheckingInterval: HTTP_DEADLINE_CHECK_MS,
};

function tlsOptions(files: CertificateFiles, clientCertAuth: boolean): https.ServerOptions {
  const { ca, cert, key } = files.pem();
  return { ca, cert, key, requestCert: true, rejectUnauthorized: clientCertAuth, minVersion: 'TLSv1.2', handshakeTimeout: HTTP_TLS_HANDSHAKE_TIMEOUT_MS };
}

export class HttpListener {
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: http.Server | https.Server,
    private readonly options: HttpListenerOptions,
  ) {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** Listens on `options.address`; rejects with a message naming httpListen when it cannot. */
  static async start(options: HttpListenerOptions, deps: GatewayDeps): Promise<HttpListener> {
    const gateway = new Gateway(deps);
    const dashboard = DashboardAssets.load();
    const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      const pathname = URL.canParse(req.url ?? '/', 'http://listener') ? new URL(req.url ?? '/', 'http://listener').pathname : '';
      if (dashboard.serves(pathname)) dashboard.answer(req, res, pathname);
      else gateway.handle(req, res);
    };
    const server = options.certificates ? https.createServer({ ...SERVER_OPTIONS, ...tlsOptions(options.certificates, options.clientCertAuth) }, handler) : http.createServer(SERVER_OPTIONS, handler);
    server.maxConnections = MAX_HTTP_CONNECTIONS;
    const listener = new HttpListener(server, options);
    const sep = options.address.lastIndexOf(':');
    const host = options.address.slice(0, sep).replace(/^\[|\]$/g, '');
    const port = Number(options.address.slice(sep + 1));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) => reject(new Error(`httpListen: cannot listen on ${options.address}: ${err.message}`)));
      server.listen(port, host, () => resolve());
    });
    server.on('error', (err) => options.logger.error({ err }, 'http listener error'));
    return listener;
  }

  /** New connections get the certificates as reread (SIGHUP); open ones keep theirs. */
  reloadCertificates(): void {
    const { certificates, clientCertAuth } = this.options;
    if (certificates && this.server instanceof https.Server) this.server.setSecureContext(tlsOptions(certificates, clientCertAuth));
  }

  /** Stops accepting and ends every open connection (event streams included). */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}
