// A small fault-injecting TCP proxy for ONE directed peer link: the gRPC stream that node A opens to node B.
// A's config dials B through it (`peerAddresses[B]`), so the proxy sees exactly A -> B traffic (A's Raft
// messages in one direction, B's stream acknowledgements and HTTP/2 control frames in the other). B's
// messages to A travel on B's own stream, through the proxy of the link B -> A. Cutting only link A -> B
// is therefore a true one-way partition at the Raft message level: "A cannot send to B, B still reaches A".
//
// Why proxies and not one network namespace per node: namespaces (ip netns + veth + iptables) need root
// and a kernel that allows them, which CI sandboxes and developer laptops often do not give; a proxy is
// plain node:net, runs everywhere the node runs, needs no setup or cleanup outside the test process, and
// controls each direction of each link separately (a namespace firewall is per host, per address). The
// container suite (test/chaos) covers the kernel-level variant with iptables in real namespaces.
//
// Faults:
//   cut()         a partition of this link. New connections are BLACKHOLED: accepted and never forwarded
//                 (nor answered), as a SYN into a partition is never answered; the dialer must time out on
//                 its own (the transport's connect timeout and gRPC keepalive are exercised, as they would
//                 be in production). Refusing instead (an immediate RST) would tell the dialer at once that
//                 the peer is gone, which a real partition never does. Existing connections are FROZEN by
//                 default: no byte moves in either direction until heal() (TCP keeps unacknowledged bytes
//                 and delivers them late if the connection survives; gRPC keepalive usually kills it
//                 first, after ~3 s). `cut({ existing: 'reset' })` destroys them instead (like a crash of a
//                 middlebox), so the dialer notices at once.
//   block(dir)    stops forwarding one direction ('forward' = A -> B, 'backward' = B -> A) and keeps the
//                 other. Bytes are held, not discarded: dropping bytes from the middle of a TCP stream would
//                 corrupt the HTTP/2 framing, which a real network never does. gRPC over TCP needs both
//                 directions (acks, window updates, keepalive pings), so a one-way block stalls the stream:
//                 exactly what a one-way packet loss does to TCP, too.
//   delay(ms)     holds every chunk `ms` before forwarding it (both directions), order kept.
//   heal()        ends cut and blocks (delay stays until delay(0)); held bytes flow again, blackholed
//                 connections are closed (their dialers gave up on them long ago).
//   close()       stops listening and destroys everything.
import * as net from 'node:net';

export type Direction = 'forward' | 'backward';

export interface FaultProxyOptions {
  /** Label for logs and errors, e.g. "n1->n2". */
  name?: string;
  /** host:port of B (the real node). */
  target: string;
  /** Listen port (default 0: a free one). */
  port?: number;
}

export interface ProxyStats {
  /** Connections accepted (forwarded or blackholed). */
  accepted: number;
  /** Connections accepted while cut and never forwarded. */
  blackholed: number;
  /** Bytes forwarded A -> B and B -> A. */
  forwardBytes: number;
  backwardBytes: number;
  /** Connections destroyed by cut({ existing: 'reset' }). */
  reset: number;
}

/** One direction of one proxied connection: chunks read from `src`, written to `dst`. */
class Pipe {
  private readonly queue: Array<{ at: number; chunk: Buffer }> = [];
  private timer: NodeJS.Timeout | null = null;
  private backpressured = false;
  private ended = false;

  constructor(
    private readonly proxy: FaultProxy,
    private readonly dir: Direction,
    private readonly src: net.Socket,
    private readonly dst: net.Socket,
  ) {
    src.on('data', (chunk: Buffer) => {
      this.queue.push({ at: Date.now() + proxy.delayMs, chunk });
      this.pump();
    });
    src.on('end', () => {
      this.ended = true;
      this.pump();
    });
    dst.on('drain', () => {
      this.backpressured = false;
      this.pump();
    });
  }

  /** Moves what may move now; pauses the source while blocked, delayed or backpressured. */
  pump(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.dst.destroyed) return;
    while (!this.proxy.isBlocked(this.dir) && !this.backpressured && this.queue.length > 0) {
      const head = this.queue[0]!;
      const wait = head.at - Date.now();
      if (wait > 0) {
        this.timer = setTimeout(() => this.pump(), wait);
        break;
      }
      this.queue.shift();
      this.proxy.count(this.dir, head.chunk.length);
      if (!this.dst.write(head.chunk)) this.backpressured = true;
    }
    if (this.ended && this.queue.length === 0 && !this.proxy.isBlocked(this.dir)) {
      this.dst.end();
      return;
    }
    // Stop reading while nothing can leave: bytes wait in the kernel, as they would in a stalled TCP stream.
    const hold = this.proxy.isBlocked(this.dir) || this.backpressured || this.queue.length > 64;
    if (hold) this.src.pause();
    else this.src.resume();
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queue.length = 0;
  }
}

class Connection {
  readonly pipes: Pipe[] = [];
  constructor(
    readonly client: net.Socket,
    readonly upstream: net.Socket,
  ) {}

  destroy(): void {
    for (const p of this.pipes) p.dispose();
    this.client.destroy();
    this.upstream.destroy();
  }
}

export class FaultProxy {
  readonly name: string;
  readonly target: string;
  private server: net.Server | null = null;
  private listenPort = 0;
  private readonly conns = new Set<Connection>();
  private readonly holes = new Set<net.Socket>();
  private cutNow = false;
  private readonly blocked: Record<Direction, boolean> = { forward: false, backward: false };
  delayMs = 0;
  readonly stats: ProxyStats = { accepted: 0, blackholed: 0, forwardBytes: 0, backwardBytes: 0, reset: 0 };

  private constructor(opts: FaultProxyOptions) {
    this.name = opts.name ?? `proxy->${opts.target}`;
    this.target = opts.target;
  }

  /** Starts a proxy on 127.0.0.1 (a free port unless `port` is given). */
  static async start(opts: FaultProxyOptions): Promise<FaultProxy> {
    const p = new FaultProxy(opts);
    await p.listen(opts.port ?? 0);
    return p;
  }

  /** host:port the dialing node must use. */
  get address(): string {
    return `127.0.0.1:${this.listenPort}`;
  }

  get port(): number {
    return this.listenPort;
  }

  /** True while cut or while any direction is blocked. */
  get faulty(): boolean {
    return this.cutNow || this.blocked.forward || this.blocked.backward;
  }

  /** A one-line state for fault timelines. */
  describe(): string {
    const parts: string[] = [];
    if (this.cutNow) parts.push('cut');
    if (!this.cutNow && this.blocked.forward) parts.push('block forward');
    if (!this.cutNow && this.blocked.backward) parts.push('block backward');
    if (this.delayMs > 0) parts.push(`delay ${this.delayMs} ms`);
    return `${this.name}: ${parts.length ? parts.join(', ') : 'ok'}`;
  }

  isBlocked(dir: Direction): boolean {
    return this.cutNow || this.blocked[dir];
  }

  /** @internal byte accounting of the pipes. */
  count(dir: Direction, bytes: number): void {
    if (dir === 'forward') this.stats.forwardBytes += bytes;
    else this.stats.backwardBytes += bytes;
  }

  /** A partition of this link (see the header): blackholes new connections, freezes (or resets) old ones. */
  cut(opts: { existing?: 'freeze' | 'reset' } = {}): void {
    this.cutNow = true;
    if (opts.existing === 'reset') {
      for (const c of this.conns) {
        c.destroy();
        this.stats.reset++;
      }
      this.conns.clear();
    } else {
      this.pumpAll();
    }
  }

  /** Stops one direction of this link (bytes held until heal). */
  block(dir: Direction): void {
    this.blocked[dir] = true;
    this.pumpAll();
  }

  /** Holds every chunk `ms` before forwarding (0 ends the delay). */
  delay(ms: number): void {
    this.delayMs = Math.max(0, ms);
    this.pumpAll();
  }

  /** Ends cut and blocks; closes blackholed connections. The delay stays (delay(0) ends it). */
  heal(): void {
    this.cutNow = false;
    this.blocked.forward = false;
    this.blocked.backward = false;
    for (const s of this.holes) s.destroy();
    this.holes.clear();
    this.pumpAll();
  }

  /** Stops listening and destroys every connection. */
  async close(): Promise<void> {
    for (const c of this.conns) c.destroy();
    this.conns.clear();
    for (const s of this.holes) s.destroy();
    this.holes.clear();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  // ---- plumbing -------------------------------------------------------------------------------------------

  private pumpAll(): void {
    for (const c of this.conns) for (const p of c.pipes) p.pump();
  }

  private listen(port: number): Promise<void> {
    const server = net.createServer({ pauseOnConnect: true }, (socket) => this.accept(socket));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        server.on('error', () => undefined);
        this.listenPort = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });
  }

  private accept(client: net.Socket): void {
    this.stats.accepted++;
    client.setNoDelay(true);
    client.on('error', () => undefined);
    if (this.cutNow) {
      // Blackhole: accepted (paused, so nothing is read), never forwarded, never answered.
      this.stats.blackholed++;
      this.holes.add(client);
      client.once('close', () => this.holes.delete(client));
      return;
    }
    const [host, portText] = splitHostPort(this.target);
    const upstream = net.connect({ host, port: Number(portText) });
    upstream.setNoDelay(true);
    upstream.pause();
    const conn = new Connection(client, upstream);
    this.conns.add(conn);
    const teardown = (): void => {
      if (!this.conns.delete(conn)) return;
      conn.destroy();
    };
    // B down (refused) or gone: the dialer sees its connection close, as it would without the proxy.
    upstream.on('error', teardown);
    client.on('error', teardown);
    upstream.on('close', teardown);
    client.on('close', teardown);
    upstream.once('connect', () => {
      conn.pipes.push(new Pipe(this, 'forward', client, upstream), new Pipe(this, 'backward', upstream, client));
      for (const p of conn.pipes) p.pump();
    });
  }
}

function splitHostPort(address: string): [string, string] {
  const i = address.lastIndexOf(':');
  if (i <= 0) throw new Error(`not host:port: ${address}`);
  return [address.slice(0, i).replace(/^\[|\]$/g, ''), address.slice(i + 1)];
}
