/**
 * The real client's calls over the simulated network (ClientTransport, src/client/transport.ts). A call
 * travels from the client's actor to the node's with the Network's loss and delay, is served by the node's
 * real handlers (simServices.ts) on bytes serialized as on the wire, and answers in grpc-js's shapes: a
 * ServiceError with code, details and metadata (leader hints included), streams that emit data, error, end.
 *
 * A unary request or answer that the network loses is silence: the client's deadline (on its own clock)
 * ends the call. A stream is one connection: its messages keep their order, a lost one comes later (TCP
 * retransmits it); once a message meets a cut link the connection is dead both ways, silently, until the
 * client gives it up or its keepalive pings find it dead. Cancelling reaches
 * the node 1 ms later whatever the network does (the connection's teardown). A node that crashes resets
 * every call open on it.
 */
import { EventEmitter } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import type { MethodDesc } from '../../src/client/proto';
import type { BidiStreamCall, ClientTransport, ServerStreamCall, UnaryCall } from '../../src/client/transport';
import type { Network } from './network';
import { servedMethods, type ServedMethod } from './simServices';
import type { SimNode } from './simNode';
import type { Actor, World } from './world';

/** TCP's first retransmission timeout (Linux: 200 ms), doubling on each loss of the same segment. */
const RETRANSMIT_MS = 200;

/** How long a dead connection goes unnoticed at most: grpc.keepalive_time_ms + grpc.keepalive_timeout_ms. */
const KEEPALIVE_DETECT_MS = 3_000;

/** What the transport needs of the simulation. */
export interface SimTransportEnv {
  world: World;
  net: Network;
  /** The node listening at a client address, if any was ever started there. */
  nodeAt(address: string): SimNode | undefined;
  /** Registers what to do when `node` crashes with this call open; returns the unregistration. */
  onReset(node: SimNode, reset: () => void): () => void;
  /** Every answer a node sends (a response message, or an error status), as it leaves the node. */
  answered(node: SimNode, path: string, answer: { res?: unknown; err?: Partial<grpc.ServiceError> }): void;
}

export function serviceError(code: grpc.status, details: string, metadata = new grpc.Metadata()): grpc.ServiceError {
  return Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), { code, details, metadata });
}

/** A status from a handler (Partial<ServiceError>) as the client receives it. */
function received(err: Partial<grpc.ServiceError>): grpc.ServiceError {
  return serviceError(err.code ?? grpc.status.UNKNOWN, err.details ?? err.message ?? '', err.metadata ?? new grpc.Metadata());
}

export class SimTransport implements ClientTransport {
  private closed = false;

  constructor(
    private readonly env: SimTransportEnv,
    readonly actor: Actor,
  ) {}

  private get world(): World {
    return this.env.world;
  }

  unary<Req, Res>(address: string, m: MethodDesc<Req, Res>, req: Req, timeoutMs: number): UnaryCall<Res> {
    const bytes = m.serialize(req);
    let settle: (err: grpc.ServiceError | undefined, res?: Buffer) => void = () => undefined;
    let cancelServer: () => void = () => undefined;
    const response = new Promise<Res>((resolve, reject) => {
      let settled = false;
      settle = (err, res) => {
        if (settled) return;
        settled = true;
        if (err) reject(err);
        else resolve(m.deserialize(res!));
      };
    });
    const deadline = this.world.at(this.actor.realAfter(Math.max(1, timeoutMs)), this.actor, () => {
      settle(serviceError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'));
      cancelServer();
    });
    const node = this.env.nodeAt(address);
    const reply = (err: grpc.ServiceError | undefined, res?: Buffer): void => {
      if (!node) return;
      const back = this.env.net.delays(node.id, this.actor.name, false);
      if (back.length > 0) this.world.at(this.world.now + back[0]!, this.actor, () => settle(err, res));
    };
    const there = node && !this.closed ? this.env.net.delays(this.actor.name, node.id, false) : [];
    if (node && there.length > 0) {
      this.world.at(this.world.now + there[0]!, node.actor, () => {
        const served = this.serve(node, m.path, reply);
        if (!served) return;
        const { method, incarnation } = served;
        const call = new ServerCall(this.peer(), method.definition.requestDeserialize(bytes));
        const unregister = this.env.onReset(node, () => reply(serviceError(grpc.status.UNAVAILABLE, 'connection reset')));
        cancelServer = () => this.world.at(this.world.now + 1, node.actor, () => call.cancel(), incarnation);
        (method.handler as grpc.handleUnaryCall<unknown, unknown>)(call as never, (err, res) => {
          if (node.actor.incarnation !== incarnation) return;
          unregister();
          this.env.answered(node, m.path, err ? { err } : { res });
          if (err) reply(received(err));
          else reply(undefined, method.definition.responseSerialize(res));
        });
      });
    }
    return {
      response,
      cancel: () => {
        this.actor.cancel(deadline);
        settle(serviceError(grpc.status.CANCELLED, 'Cancelled on client'));
        cancelServer();
      },
    };
  }

  serverStream<Req, Res>(address: string, m: MethodDesc<Req, Res>, req: Req): ServerStreamCall<Res> {
    const stream = this.open<Req, Res>(address, m);
    stream.send(req);
    return stream.client;
  }

  bidiStream<Req, Res>(address: string, m: MethodDesc<Req, Res>): BidiStreamCall<Req, Res> {
    return this.open<Req, Res>(address, m).client;
  }

  close(): void {
    this.closed = true;
  }

  private peer(): string {
    return `${this.actor.name}.client:1`;
  }

  private open<Req, Res>(address: string, m: MethodDesc<Req, Res>): SimStream<Req, Res> {
    return new SimStream<Req, Res>(this.env, this.actor, this.env.nodeAt(address), m, this.closed, (node, reply) => this.serve(node, m.path, reply), this.peer());
  }

  /** The node's handler for `path` in its current incarnation, or the refusal a client would see. */
  private serve(node: SimNode, path: string, reply: (err: grpc.ServiceError) => void): { method: ServedMethod; incarnation: number } | undefined {
    const runtime = node.runtime;
    if (!runtime) {
      reply(serviceError(grpc.status.UNAVAILABLE, 'connection refused'));
      return undefined;
    }
    const method = servedMethods(runtime).get(path);
    if (!method) {
      reply(serviceError(grpc.status.UNIMPLEMENTED, `${path} is not served`));
      return undefined;
    }
    return { method, incarnation: node.actor.incarnation };
  }
}

/** What a handler sees of its call: grpc-js's ServerUnaryCall / ServerDuplexStream, as far as handlers use them. */
class ServerCall extends EventEmitter {
  cancelled = false;
  destroyed = false;
  /** Answers written and not yet sent: none, every write goes out at once (no flow control is simulated). */
  readonly writableLength = 0;
  readonly metadata = new grpc.Metadata();

  constructor(
    private readonly peerName: string,
    readonly request: unknown = undefined,
    /** Where the stream's messages and its status go (streams only). */
    private readonly out?: { data(res: unknown): void; status(err: Partial<grpc.ServiceError> | undefined): void },
  ) {
    super();
  }

  getPeer(): string {
    return this.peerName;
  }

  getAuthContext(): Record<string, never> {
    return {};
  }

  getDeadline(): number {
    return Infinity;
  }

  getPath(): string {
    return '';
  }

  sendMetadata(): void {}

  isPaused(): boolean {
    return false;
  }

  pause(): this {
    return this;
  }

  resume(): this {
    return this;
  }

  write(res: unknown): boolean {
    if (!this.destroyed) this.out?.data(res);
    return true;
  }

  end(): this {
    this.finish(undefined);
    return this;
  }

  /** As grpc-js's server streams: an emitted error ends the call with that status. */
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'error') this.finish(args[0] as Partial<grpc.ServiceError>);
    return super.emit(event, ...args);
  }

  cancel(): void {
    if (this.cancelled || this.destroyed) return;
    this.cancelled = true;
    this.destroyed = true;
    super.emit('cancelled');
    super.emit('close');
  }

  private finish(status: Partial<grpc.ServiceError> | undefined): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.out?.status(status);
    queueMicrotask(() => super.emit('close'));
  }
}

/** One stream: its client end (what the client library holds) and its connection to a node. */
class SimStream<Req, Res> {
  readonly client: ClientEnd<Req, Res>;
  /** Once a message is lost, nothing more passes either way (a dead connection). */
  private dead = false;
  private toNodeAt = 0;
  private toClientAt = 0;
  private server: ServerCall | undefined;
  private incarnation: number;
  private unregister: () => void = () => undefined;

  constructor(
    private readonly env: SimTransportEnv,
    private readonly actor: Actor,
    private readonly node: SimNode | undefined,
    private readonly m: MethodDesc<Req, Res>,
    closed: boolean,
    serve: (node: SimNode, reply: (err: grpc.ServiceError) => void) => { method: ServedMethod; incarnation: number } | undefined,
    peer: string,
  ) {
    this.client = new ClientEnd<Req, Res>(this, actor);
    this.incarnation = node?.actor.incarnation ?? 0;
    if (!node || closed) {
      this.dead = true;
      return;
    }
    this.toNode(() => {
      const served = serve(node, (err) => this.toClient(() => this.client.failed(err)));
      if (!served) return;
      const { method, incarnation } = served;
      this.incarnation = incarnation;
      const server = new ServerCall(peer, undefined, {
        data: (res) => {
          const bytes = method.definition.responseSerialize(res);
          this.env.answered(node, m.path, { res });
          this.toClient(() => this.client.received(m.deserialize(bytes)));
        },
        status: (err) => {
          this.unregister();
          if (err) this.env.answered(node, m.path, { err });
          this.toClient(() => (err ? this.client.failed(received(err)) : this.client.ended()));
        },
      });
      this.server = server;
      this.unregister = env.onReset(node, () => {
        server.destroyed = true;
        this.toClient(() => this.client.failed(serviceError(grpc.status.UNAVAILABLE, 'connection reset')));
      });
      // A server-streaming call's request is its first message: the handler reads it off the call.
      const first = this.pendingRequest;
      if (method.definition.requestStream) (method.handler as grpc.handleBidiStreamingCall<unknown, unknown>)(server as never);
      else {
        (server as unknown as { request: unknown }).request = first === undefined ? undefined : method.definition.requestDeserialize(first);
        (method.handler as grpc.handleServerStreamingCall<unknown, unknown>)(server as never);
      }
    });
  }

  private pendingRequest: Buffer | undefined;

  /** A message from the client: a server-streaming call's request, or one more message of a bidi stream. */
  send(req: Req): void {
    const bytes = this.m.serialize(req);
    if (this.pendingRequest === undefined && this.server === undefined && !this.sentAny) {
      this.sentAny = true;
      this.pendingRequest = bytes;
      // Carried by the open itself for a server stream; a bidi stream's first message follows it in order.
    }
    this.toNode(() => {
      const server = this.server;
      if (!server || server.destroyed || !server.listenerCount('data')) return;
      server.emit('data', this.deserializeAtNode(bytes));
    });
  }

  private sentAny = false;

  private deserializeAtNode(bytes: Buffer): unknown {
    const method = this.node?.runtime ? servedMethods(this.node.runtime).get(this.m.path) : undefined;
    return method ? method.definition.requestDeserialize(bytes) : undefined;
  }

  halfClose(): void {
    this.toNode(() => {
      const server = this.server;
      if (server && !server.destroyed) server.emit('end');
    });
  }

  cancel(): void {
    this.dead = true;
    const node = this.node;
    if (!node) return;
    this.env.world.at(this.env.world.now + 1, node.actor, () => this.server?.cancel(), this.incarnation);
  }

  /**
   * One message's delay on this connection: a lost one is sent again after a retransmission timeout, as TCP
   * does; across a cut link the connection dies (undefined), silently, as a connection that no packet crosses.
   */
  private delay(from: string, to: string): number | undefined {
    if (this.env.net.isCut(from, to)) {
      this.die();
      return undefined;
    }
    for (let rto = 0; ; rto = Math.min(rto === 0 ? RETRANSMIT_MS : rto * 2, 4 * RETRANSMIT_MS)) {
      const d = this.env.net.delays(from, to, false);
      if (d.length > 0) return rto + d[0]!;
    }
  }

  /**
   * The connection stops carrying anything; the client's keepalive pings (router.ts CHANNEL_OPTIONS: a ping
   * every 2 s, 1 s to answer) find it dead within KEEPALIVE_DETECT_MS on its clock and fail the stream.
   */
  private die(): void {
    if (this.dead) return;
    this.dead = true;
    this.env.world.at(this.actor.realAfter(KEEPALIVE_DETECT_MS), this.actor, () => {
      this.client.failed(serviceError(grpc.status.UNAVAILABLE, 'keepalive watchdog timeout'));
      this.cancel();
    });
  }

  private toNode(fn: () => void): void {
    const node = this.node;
    if (this.dead || !node) return;
    const d = this.delay(this.actor.name, node.id);
    if (d === undefined) return;
    this.toNodeAt = Math.max(this.toNodeAt, this.env.world.now + d);
    this.env.world.at(this.toNodeAt, node.actor, fn, this.incarnation);
  }

  private toClient(fn: () => void): void {
    const node = this.node;
    if (this.dead || !node) return;
    const d = this.delay(node.id, this.actor.name);
    if (d === undefined) return;
    this.toClientAt = Math.max(this.toClientAt, this.env.world.now + d);
    this.env.world.at(this.toClientAt, this.actor, fn);
  }
}

/** The client's end of a stream, in grpc-js's shape: data, error and end events; write, end, cancel, pause. */
class ClientEnd<Req, Res> extends EventEmitter implements BidiStreamCall<Req, Res>, ServerStreamCall<Res> {
  private finished = false;
  private paused = false;
  private readonly buffered: Res[] = [];

  constructor(
    private readonly stream: SimStream<Req, Res>,
    private readonly actor: Actor,
  ) {
    super();
  }

  write(req: Req): boolean {
    if (!this.finished) this.stream.send(req);
    return true;
  }

  end(): this {
    if (!this.finished) this.stream.halfClose();
    return this;
  }

  cancel(): void {
    if (this.finished) return;
    this.stream.cancel();
    // grpc-js reports a cancelled call as an error with status CANCELLED, after the call returns.
    this.actor.world.at(this.actor.world.now, this.actor, () => this.failed(serviceError(grpc.status.CANCELLED, 'Cancelled on client')));
  }

  pause(): this {
    this.paused = true;
    return this;
  }

  resume(): this {
    this.paused = false;
    for (const res of this.buffered.splice(0)) if (!this.finished) this.emit('data', res);
    return this;
  }

  received(res: Res): void {
    if (this.finished) return;
    if (this.paused) this.buffered.push(res);
    else this.emit('data', res);
  }

  failed(err: grpc.ServiceError): void {
    if (this.finished) return;
    this.finished = true;
    this.emit('error', err);
  }

  ended(): void {
    if (this.finished) return;
    this.finished = true;
    this.emit('end');
  }
}
