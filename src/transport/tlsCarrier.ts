// The TLS framing carrier: length-prefixed frames (frames.ts) over mutual TLS with node:tls on the peer
// listener, or over plain TCP on loopback when the node runs without certificates.
//
// One connection per direction: each node dials its own outgoing stream to every peer and accepts the
// peers' streams on its listener. That is the policy's model (an outgoing stream per peer, inbound streams
// admitted on their own), so no tie-break is needed when two nodes dial each other at once, each direction
// has its own backpressure, and a one-way partition breaks only the direction it cuts. Two connections per
// pair cost nothing that matters at a cluster's size.
//
// Bounds: a frame's length is checked before its body is kept (a 4 GiB prefix is refused at once), HELLO
// and REFUSE are at most MAX_CONTROL_FRAME_BYTES, every frame must complete within the read deadline (a slow
// drip of bytes is cut off), the handshake and HELLO too, and a quiet side PINGs so that the other's deadline
// also finds a dead connection. A listener whose dialler does not read its (tiny) answers beyond
// MAX_UNREAD_ANSWER_BYTES drops it; a dialler's own writes stop at the socket's buffer (write() returns
// false) and the policy's bounded queue absorbs the rest.
import * as net from 'node:net';
import * as tls from 'node:tls';
import { nodeIdOf } from '../certs/identity';
import type { NodeId } from '../raft/types';
import type { Carrier, InboundHandlers, InboundStream, OutboundEvents, OutboundStream, PeerDialer, PeerHello, Refusal, StreamEnd } from './carrier';
import { encodeFrame, FrameError, FrameKind, FrameReader, MAX_CONTROL_FRAME_BYTES, MAX_FRAME_BODY_BYTES, type Frame } from './frames';

/** The PEM material of the node's certificate, key and cluster CA (reread for every new connection). */
export interface TlsPem {
  ca: Buffer | string;
  cert: Buffer | string;
  key: Buffer | string;
}

export interface TlsCarrierOptions {
  /** Mutual TLS material; null runs plain TCP (loopback only, config.ts) and authenticates nobody. */
  credentials: (() => TlsPem) | null;
  /** A frame (and the handshake with HELLO) must complete within this; a side quiet this long is dead. 15 s. */
  readDeadlineMs?: number;
  /** A side that sent nothing for this long sends a PING. 2 s. */
  pingEveryMs?: number;
  /** Inbound connections held at once; more are closed at accept. 256. */
  maxConnections?: number;
}

export const DEFAULT_READ_DEADLINE_MS = 15_000;
export const DEFAULT_PING_EVERY_MS = 2_000;
/** A dialler that lets this much of the listener's answers (ACCEPT, PINGs) go unread is not reading. */
export const MAX_UNREAD_ANSWER_BYTES = 64 * 1024;

type Socket = net.Socket | tls.TLSSocket;

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function hostPort(address: string): { host: string; port: number } {
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(address.slice(i + 1)) };
}

function json(frame: Frame): Record<string, unknown> {
  const parsed: unknown = JSON.parse(frame.payload.toString('utf8'));
  if (typeof parsed !== 'object' || parsed === null) throw new FrameError('control frame is not a JSON object');
  return parsed as Record<string, unknown>;
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/**
 * One connection's framing: reads frames within the deadline, pings when quiet, and reports the connection's
 * end once. Both directions use it; what a frame means is the caller's.
 */
class FramedConnection {
  private readonly reader: FrameReader;
  private lastFrameAt = Date.now();
  private lastSentAt = Date.now();
  private readonly timer: NodeJS.Timeout;
  private ended = false;

  constructor(
    readonly socket: Socket,
    maxBody: number,
    private readonly opts: { readDeadlineMs: number; pingEveryMs: number },
    private readonly onFrame: (frame: Frame) => void,
    private readonly onEnd: (why: string) => void,
  ) {
    this.reader = new FrameReader(maxBody);
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', (err) => this.end(errorText(err)));
    socket.on('close', () => this.end('connection closed'));
    socket.on('end', () => this.end('connection ended'));
    this.timer = setInterval(() => this.check(), Math.max(10, Math.min(opts.pingEveryMs, opts.readDeadlineMs) / 2));
    this.timer.unref();
  }

  set maxBody(n: number) {
    this.reader.maxBody = n;
  }

  send(kind: FrameKind, payload?: Uint8Array): boolean {
    if (this.ended) return true;
    this.lastSentAt = Date.now();
    return this.socket.write(encodeFrame(kind, payload));
  }

  /** Sends a last frame (if any) and closes in order. */
  finish(kind?: FrameKind, payload?: Uint8Array): void {
    if (this.ended) return;
    if (kind !== undefined) this.send(kind, payload);
    this.ended = true;
    clearInterval(this.timer);
    this.socket.end();
    // A peer that never acknowledges the close is not waited for.
    setTimeout(() => this.socket.destroy(), this.opts.readDeadlineMs).unref();
  }

  destroy(why: string): void {
    this.end(why);
  }

  private read(chunk: Buffer): void {
    if (this.ended) return;
    let frames: Frame[];
    try {
      frames = this.reader.push(chunk);
    } catch (err) {
      this.end(errorText(err));
      return;
    }
    for (const frame of frames) {
      if (this.ended) return;
      this.lastFrameAt = Date.now();
      try {
        this.onFrame(frame);
      } catch (err) {
        this.end(`bad ${frame.kind} frame: ${errorText(err)}`);
      }
    }
  }

  private check(): void {
    const now = Date.now();
    if (now - this.lastFrameAt > this.opts.readDeadlineMs) {
      const why = this.reader.pending > 0 ? `a frame did not complete within ${this.opts.readDeadlineMs} ms` : `nothing heard for ${this.opts.readDeadlineMs} ms`;
      this.end(why);
      return;
    }
    if (now - this.lastSentAt >= this.opts.pingEveryMs) this.send(FrameKind.Ping);
  }

  private end(why: string): void {
    const first = !this.ended;
    this.ended = true;
    clearInterval(this.timer);
    this.socket.destroy();
    if (first || why) this.report(why);
  }

  private reported = false;

  private report(why: string): void {
    if (this.reported) return;
    this.reported = true;
    this.onEnd(why);
  }
}

class TlsOutbound implements OutboundStream {
  private done = false;
  private conn: FramedConnection | null = null;
  private pendingEnd: StreamEnd | null = null;

  constructor(
    carrier: TlsCarrier,
    peer: NodeId,
    address: string,
    hello: PeerHello,
    private readonly events: OutboundEvents,
  ) {
    const { host, port } = hostPort(address);
    const pem = carrier.credentials?.();
    const socket: Socket = pem
      ? tls.connect({
          host,
          port,
          ca: pem.ca,
          cert: pem.cert,
          key: pem.key,
          servername: net.isIP(host) ? undefined : host,
          // The host name check first, as for any TLS server; then the node it must be.
          checkServerIdentity: (name, cert) => {
            const hostError = tls.checkServerIdentity(name, cert);
            if (hostError) return hostError;
            const named = nodeIdOf(cert);
            return named === peer ? undefined : new Error(`peer at ${address} presented node identity "${named ?? 'none'}", expected "${peer}"`);
          },
        })
      : net.connect({ host, port });
    socket.setNoDelay(true);
    const conn = new FramedConnection(socket, MAX_CONTROL_FRAME_BYTES, carrier.timing, (f) => this.onFrame(f), (why) => this.closed({ clean: false, why }));
    this.conn = conn;
    socket.once(pem ? 'secureConnect' : 'connect', () => {
      conn.send(FrameKind.Hello, Buffer.from(JSON.stringify({ clusterId: hello.clusterId, nodeId: hello.nodeId, address: hello.address })));
    });
    socket.on('drain', () => {
      if (!this.done) events.drain();
    });
  }

  private onFrame(frame: Frame): void {
    switch (frame.kind) {
      case FrameKind.Accept:
        if (!this.done) this.events.open();
        return;
      case FrameKind.Ping:
        return;
      case FrameKind.End:
        this.pendingEnd = { clean: true, why: 'the peer is stopping' };
        this.conn?.destroy('');
        return;
      case FrameKind.Refuse: {
        const r = json(frame);
        const kind = text(r.kind);
        const refusal: Refusal = kind === 'removed'
          ? { kind: 'removed', id: text(r.id), by: text(r.by) }
          : { kind: kind === 'malformed' || kind === 'unavailable' ? kind : 'denied', why: text(r.why) };
        this.pendingEnd = { clean: false, why: `refused: ${refusal.kind === 'removed' ? `${refusal.id} was removed` : refusal.why}`, refusal };
        this.conn?.destroy('');
        return;
      }
      default:
        throw new FrameError(`a listener does not send frames of kind ${frame.kind}`);
    }
  }

  private closed(end: StreamEnd): void {
    if (this.done) return;
    this.done = true;
    this.events.closed(this.pendingEnd ?? end);
  }

  write(frame: Uint8Array): boolean {
    if (this.done || !this.conn) return true;
    return this.conn.send(FrameKind.Batch, frame);
  }

  end(graceMs: number): Promise<void> {
    this.done = true;
    const conn = this.conn;
    if (!conn) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, graceMs);
      conn.socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      conn.finish(FrameKind.End);
    });
  }

  cancel(): void {
    this.done = true;
    this.conn?.destroy('');
  }
}

class TlsDialer implements PeerDialer {
  constructor(
    private readonly carrier: TlsCarrier,
    private readonly peer: NodeId,
    private readonly address: string,
  ) {}

  open(hello: PeerHello, events: OutboundEvents): OutboundStream {
    return new TlsOutbound(this.carrier, this.peer, this.address, hello, events);
  }

  // Every open is a fresh connection: nothing to drop.
  openTimedOut(): void {}
  reset(): void {}
  close(): void {}
}

class TlsInbound implements InboundStream {
  private handlers: InboundHandlers | null = null;
  private done = false;

  constructor(
    readonly hello: PeerHello,
    readonly verifiedId: NodeId | undefined,
    readonly remote: string,
    private readonly conn: FramedConnection,
  ) {}

  accept(handlers: InboundHandlers): void {
    this.handlers = handlers;
    this.conn.maxBody = MAX_FRAME_BODY_BYTES;
    this.conn.send(FrameKind.Accept);
  }

  /** A frame after HELLO. */
  frame(frame: Frame): void {
    if (this.done) return;
    switch (frame.kind) {
      case FrameKind.Batch:
        if (!this.handlers) throw new FrameError('a batch before the stream was accepted');
        this.handlers.frame(frame.payload);
        break;
      case FrameKind.Ping:
        break;
      case FrameKind.End:
        this.end();
        break;
      default:
        throw new FrameError(`a dialler does not send frames of kind ${frame.kind} after HELLO`);
    }
    if (this.conn.socket.writableLength > MAX_UNREAD_ANSWER_BYTES) this.conn.destroy('the dialler does not read its answers');
  }

  closed(why: string): void {
    const handlers = this.handlers;
    this.handlers = null;
    this.done = true;
    handlers?.closed(why || undefined);
  }

  refuse(refusal: Refusal): void {
    if (this.done) return;
    this.done = true;
    this.conn.finish(FrameKind.Refuse, Buffer.from(JSON.stringify(refusal)));
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    this.conn.finish(FrameKind.End);
    const handlers = this.handlers;
    this.handlers = null;
    handlers?.closed();
  }
}

export class TlsCarrier implements Carrier {
  readonly authenticates: boolean;
  readonly credentials: (() => TlsPem) | null;
  readonly timing: { readDeadlineMs: number; pingEveryMs: number };
  private accept: ((stream: InboundStream) => void) | null = null;
  private server: net.Server | tls.Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly maxConnections: number;

  constructor(opts: TlsCarrierOptions) {
    this.credentials = opts.credentials;
    this.authenticates = opts.credentials !== null;
    this.timing = { readDeadlineMs: opts.readDeadlineMs ?? DEFAULT_READ_DEADLINE_MS, pingEveryMs: opts.pingEveryMs ?? DEFAULT_PING_EVERY_MS };
    this.maxConnections = opts.maxConnections ?? 256;
  }

  dialer(peer: NodeId, address: string): PeerDialer {
    return new TlsDialer(this, peer, address);
  }

  listen(accept: (stream: InboundStream) => void): void {
    this.accept = accept;
  }

  /** Listens on `address` (host:port; port 0 picks one). Resolves with the port. */
  bind(address: string): Promise<number> {
    const { host, port } = hostPort(address);
    const pem = this.credentials?.();
    const server = pem
      ? tls.createServer({ ca: pem.ca, cert: pem.cert, key: pem.key, requestCert: true, rejectUnauthorized: true, handshakeTimeout: this.timing.readDeadlineMs },
        (socket) => this.onConnection(socket))
      : net.createServer((socket) => this.onConnection(socket));
    server.maxConnections = this.maxConnections;
    // A failed handshake (no certificate, another CA) never reaches onConnection; the socket is closed.
    server.on('tlsClientError', () => undefined);
    this.server = server;
    return new Promise<number>((resolve, reject) => {
      server.once('error', (err) => reject(new Error(`cannot listen on ${address}: ${err.message}`)));
      server.listen(port, host, () => resolve((server.address() as net.AddressInfo).port));
    });
  }

  /** New connections use the files as they are now (SIGHUP); open ones keep theirs. */
  refreshCredentials(): void {
    const pem = this.credentials?.();
    if (pem && this.server instanceof tls.Server) this.server.setSecureContext({ ca: pem.ca, cert: pem.cert, key: pem.key });
  }

  /** Stops listening and drops every inbound connection (the policy has ended its streams first). */
  close(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (!server) return Promise.resolve();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private onConnection(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.setNoDelay(true);
    const verifiedId = socket instanceof tls.TLSSocket ? nodeIdOf(socket.getPeerCertificate()) : undefined;
    const remote = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
    let inbound: TlsInbound | null = null;
    const conn = new FramedConnection(socket, MAX_CONTROL_FRAME_BYTES, this.timing, (frame) => {
      if (inbound) return inbound.frame(frame);
      if (frame.kind !== FrameKind.Hello) throw new FrameError(`the first frame must be HELLO, not kind ${frame.kind}`);
      const h = json(frame);
      inbound = new TlsInbound({ clusterId: text(h.clusterId), nodeId: text(h.nodeId), address: text(h.address) }, this.authenticates ? verifiedId : undefined, remote, conn);
      if (this.accept) this.accept(inbound);
      else inbound.refuse({ kind: 'unavailable', why: 'peer transport is not listening' });
    }, (why) => inbound?.closed(why));
  }
}
