// An attacker's own client connection. grpc-js pools connections between the clients of one process whose
// address, credentials and options are equal, so without a channel of its own an attack would share a TCP
// connection with the test's other clients, and per-connection limits would count them together.
import * as grpc from '@grpc/grpc-js';
import { testCredentials } from '../integration/harness';
import { v1 } from '../integration/rawClient';

type Obj = Record<string, unknown>;

export interface OwnConnection {
  /** Lock.Watch on this connection; errors are left to ending() (a stream the test leaves open fails when the cluster stops). */
  watch(lock: string): grpc.ClientReadableStream<Obj>;
  /** A new Pipeline.Calls stream on this connection. */
  pipeline(): grpc.ClientDuplexStream<Obj, Obj>;
  /** A new Session.KeepAlive stream on this connection. */
  keepAlive(): grpc.ClientDuplexStream<Obj, Obj>;
  close(): void;
}

export function ownConnection(address: string, options: grpc.ChannelOptions = {}): OwnConnection {
  const channel = new grpc.Channel(address, testCredentials(), { 'grpc.use_local_subchannel_pool': 1, ...options });
  const client = (name: string): Record<string, (...args: unknown[]) => unknown> =>
    new v1[name]!(address, testCredentials(), { channelOverride: channel }) as unknown as Record<string, (...args: unknown[]) => unknown>;
  const lock = client('Lock');
  const session = client('Session');
  const pipeline = client('Pipeline');
  return {
    watch: (name) => (lock.Watch!.call(lock, { lock: name }) as grpc.ClientReadableStream<Obj>).on('error', () => undefined),
    pipeline: () => pipeline.Calls!.call(pipeline) as grpc.ClientDuplexStream<Obj, Obj>,
    keepAlive: () => session.KeepAlive!.call(session) as grpc.ClientDuplexStream<Obj, Obj>,
    close: () => channel.close(),
  };
}

/** How a stream ended: its status code name and details, once it has. */
export function ending(stream: grpc.ClientReadableStream<unknown> | grpc.ClientDuplexStream<unknown, unknown>): Promise<{ code: string; details: string; metadata: grpc.Metadata }> {
  return new Promise((resolve) => {
    stream.on('error', () => undefined); // the status says it all
    stream.once('status', (s: grpc.StatusObject) => resolve({ code: grpc.status[s.code], details: s.details, metadata: s.metadata }));
  });
}
