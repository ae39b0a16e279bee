// What a served handler sees of a call that came over the HTTP gateway: grpc-js's server call, as far as
// the handlers use it (the simulator's call in test/nodesim/simTransport.ts is its twin). It carries the
// caller's credentials exactly as a gRPC call would: a bearer token as `authorization` metadata, the client
// certificate of the TLS connection as the auth context's sslPeerCertificate, and the connection's address
// as its peer, so that access.ts identifies it, and connectionLimits.ts counts it, by the same code.
import { EventEmitter } from 'node:events';
import type { PeerCertificate } from 'node:tls';
import * as grpc from '@grpc/grpc-js';

/** Who is at the other end of an HTTP request. */
export interface CallOrigin {
  /** The Authorization header's values (each "Bearer <token>"). */
  authorization: string[];
  certificate: PeerCertificate | undefined;
  /** The connection as grpc-js names a peer: "127.0.0.1:5678" or "[::1]:5678". */
  peer: string;
}

/** Where a streaming call's messages and its end go. */
export interface CallSink {
  data(res: unknown): void;
  status(err: Partial<grpc.ServiceError> | undefined): void;
  /** Messages written and not yet taken by the client's connection. */
  unsent(): number;
}

const NO_SINK: CallSink = { data: () => undefined, status: () => undefined, unsent: () => 0 };

export class GatewayCall extends EventEmitter {
  cancelled = false;
  destroyed = false;
  readonly metadata = new grpc.Metadata();

  constructor(
    private readonly origin: CallOrigin,
    readonly request: unknown = undefined,
    private readonly sink: CallSink = NO_SINK,
  ) {
    super();
    for (const value of origin.authorization) this.metadata.add('authorization', value);
  }

  get writableLength(): number {
    return this.sink.unsent();
  }

  getPeer(): string {
    return this.origin.peer;
  }

  getAuthContext(): { sslPeerCertificate?: PeerCertificate } {
    return this.origin.certificate === undefined ? {} : { sslPeerCertificate: this.origin.certificate };
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
    if (!this.destroyed) this.sink.data(res);
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

  /** The client went away (its connection closed): the handler is told as grpc-js tells it. */
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
    this.sink.status(status);
    queueMicrotask(() => super.emit('close'));
  }
}
