import * as grpc from '@grpc/grpc-js';
import { traceHeaders, tracingActive } from '../protocol/traceContext';
import type { MethodDesc } from './proto';
import type { BidiStreamCall, ClientTransport, ServerStreamCall, UnaryCall } from './transport';

/**
 * The client's calls over gRPC: one channel per endpoint, created on first use, each with the client's
 * credentials, channel options and interceptors (see credentials.ts, auth.ts).
 */
export class GrpcTransport implements ClientTransport {
  private readonly clients = new Map<string, grpc.Client>();

  constructor(
    private readonly credentials: grpc.ChannelCredentials,
    private readonly channelOptions: grpc.ChannelOptions,
    /**
     * Run on every call of every channel, unary and streaming alike (the bearer token's metadata: see auth.ts).
     * Interceptors, not call credentials: grpc-js refuses call credentials on plaintext channels.
     */
    private readonly interceptors: grpc.Interceptor[] = [],
  ) {}

  unary<Req, Res>(address: string, m: MethodDesc<Req, Res>, req: Req, timeoutMs: number): UnaryCall<Res> {
    let call: grpc.ClientUnaryCall | undefined;
    const response = new Promise<Res>((resolve, reject) => {
      // grpc-js takes a wall-clock deadline.
      const deadline = Date.now() + Math.max(1, Math.floor(timeoutMs));
      call = this.clientFor(address).makeUnaryRequest(m.path, m.serialize, m.deserialize, req, callMetadata(), { deadline }, (err, res) => {
        if (err) reject(err);
        else resolve(res as Res);
      });
    });
    return { response, cancel: () => call?.cancel() };
  }

  serverStream<Req, Res>(address: string, m: MethodDesc<Req, Res>, req: Req): ServerStreamCall<Res> {
    return this.clientFor(address).makeServerStreamRequest(m.path, m.serialize, m.deserialize, req, new grpc.Metadata(), {});
  }

  bidiStream<Req, Res>(address: string, m: MethodDesc<Req, Res>): BidiStreamCall<Req, Res> {
    return this.clientFor(address).makeBidiStreamRequest(m.path, m.serialize, m.deserialize, new grpc.Metadata(), {});
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }

  private clientFor(address: string): grpc.Client {
    let c = this.clients.get(address);
    if (!c) {
      c = new grpc.Client(address, this.credentials, { ...this.channelOptions, interceptors: this.interceptors });
      this.clients.set(address, c);
    }
    return c;
  }
}

/** Empty, or the active trace context (traceparent, baggage) while tracing is on: the node's span joins the caller's. */
function callMetadata(): grpc.Metadata {
  const md = new grpc.Metadata();
  if (tracingActive()) for (const [k, v] of Object.entries(traceHeaders())) md.set(k, v);
  return md;
}
