import * as grpc from '@grpc/grpc-js';
import { flattenMessage, makeMessage } from '../../src/raft/messages';
import { EntryType, MessageType, type Message, type NodeId, type WireMessage } from '../../src/raft/types';
import { GrpcPeerTransport, PEER_SERVER_OPTIONS, type GrpcPeerTransportOptions, type TransportLogger } from '../../src/transport/grpcPeerTransport';

/** An App-like message: one entry of `payload` bytes; `index` identifies it in assertions. */
export function appMsg(from: NodeId, to: NodeId, index: number, payload = 16): Message {
  return makeMessage({
    type: MessageType.App,
    from,
    to,
    term: 3,
    logTerm: 3,
    index,
    entries: [{ term: 3, index: index + 1, type: EntryType.Normal, data: new Uint8Array(payload).fill(index % 251) }],
    commit: index,
  });
}

/** The wire `index` of a message: the sequence number appMsg gave it. */
export function seq(m: Message): number {
  return flattenMessage(m).index;
}

export interface LogLine {
  level: 'warn' | 'debug';
  obj: object;
  msg: string;
}

export function memoryLogger(): TransportLogger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  return {
    lines,
    warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
    debug: (obj, msg) => lines.push({ level: 'debug', obj, msg }),
  };
}

export async function bindServer(server: grpc.Server, port = 0): Promise<number> {
  return new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound)),
  );
}

/** A loopback port that nothing listens on right now (bound once, then released). */
export async function freePort(): Promise<number> {
  const server = new grpc.Server();
  const port = await bindServer(server);
  server.forceShutdown();
  return port;
}

/** One node's peer side: a server with the RaftPeer service and its transport; records what arrives. */
export class TestNode {
  /** As wire records, so assertions can name the wire fields. */
  readonly received: WireMessage[] = [];
  /** Sizes of the batches handed to onMessages, in arrival order. */
  readonly batches: number[] = [];
  readonly unreachable: NodeId[] = [];
  readonly logger = memoryLogger();
  server: grpc.Server | null = null;
  transport: GrpcPeerTransport | null = null;

  constructor(readonly id: NodeId) {}

  /** Starts the server (with the transport registered) on `port`, 0 = any. Returns the port. */
  async listen(port = 0): Promise<number> {
    this.server = new grpc.Server(PEER_SERVER_OPTIONS);
    return bindServer(this.server, port);
  }

  start(peers: Record<NodeId, string>, opts: Partial<GrpcPeerTransportOptions> = {}): GrpcPeerTransport {
    const t = new GrpcPeerTransport({ selfId: this.id, peers, logger: this.logger, ...opts });
    t.onMessages((msgs) => {
      this.batches.push(msgs.length);
      this.received.push(...msgs.map(flattenMessage));
    });
    t.onUnreachable((peer) => this.unreachable.push(peer));
    if (this.server) t.register(this.server);
    this.transport = t;
    return t;
  }

  async stop(): Promise<void> {
    await this.transport?.close();
    this.transport = null;
    this.server?.forceShutdown();
    this.server = null;
  }
}

/** Starts TestNodes on loopback ports for one test file; call stopAll in afterEach. */
export function loopbackNodes(): { node(id: NodeId): Promise<{ n: TestNode; addr: string }>; stopAll(): Promise<void> } {
  const started: TestNode[] = [];
  return {
    async node(id) {
      const n = new TestNode(id);
      started.push(n);
      const port = await n.listen();
      return { n, addr: `127.0.0.1:${port}` };
    },
    async stopAll() {
      await Promise.all(started.splice(0).map((n) => n.stop()));
    },
  };
}

export async function waitFor(what: string, cond: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves after the current turn's setImmediate callbacks (the transport's flush) have run. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
