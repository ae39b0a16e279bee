import type { MethodDesc } from './proto';

/*
 * How the client's calls reach a node: the seam between the client's logic (router, pipeline, keepalive,
 * watch, snapshot) and gRPC. The default is grpcTransport.ts; the simulator passes one over its virtual
 * network. A failed call or stream fails with an error in grpc-js's shape (grpc.ServiceError: code, details,
 * metadata), which is what toFenceLockError reads.
 */

/** The messages a call receives, as grpc-js streams emit them; `cancel` ends the call from this side. */
export interface IncomingStream<Res> {
  on(event: 'data', listener: (res: Res) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  cancel(): void;
}

/** A server-streaming call, with flow control: a paused stream delivers no data until resumed. */
export interface ServerStreamCall<Res> extends IncomingStream<Res> {
  pause(): unknown;
  resume(): unknown;
}

/** A bidirectional stream: `end` says this side will send no more. */
export interface BidiStreamCall<Req, Res> extends IncomingStream<Res> {
  /** The node's response headers, once, before any message (a transport without headers never emits it). */
  on(event: 'metadata', listener: (headers: { get(key: string): Array<string | Buffer> }) => void): unknown;
  on(event: 'data', listener: (res: Res) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  write(req: Req): unknown;
  end(): unknown;
}

/** A unary call in flight: its response, or a rejection (a cancelled call rejects CANCELLED). */
export interface UnaryCall<Res> {
  readonly response: Promise<Res>;
  cancel(): void;
}

export interface ClientTransport {
  /** One attempt of a unary call to `address`, which fails DEADLINE_EXCEEDED after `timeoutMs`. */
  unary<Req, Res>(address: string, method: MethodDesc<Req, Res>, req: Req, timeoutMs: number): UnaryCall<Res>;
  serverStream<Req, Res>(address: string, method: MethodDesc<Req, Res>, req: Req): ServerStreamCall<Res>;
  bidiStream<Req, Res>(address: string, method: MethodDesc<Req, Res>): BidiStreamCall<Req, Res>;
  /** Closes every connection; the client makes no call on the transport afterwards. */
  close(): void;
}
