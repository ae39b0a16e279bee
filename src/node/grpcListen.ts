// Binding and stopping a grpc.Server: the client listener's, and the peer listener's with the gRPC carrier.
import * as grpc from '@grpc/grpc-js';
import type { Timers } from './runtime/ports';

/** Binds a server to one address, resolving when it listens. */
export function bind(server: grpc.Server, address: string, credentials: grpc.ServerCredentials): Promise<void> {
  return new Promise<void>((resolve, reject) =>
    server.bindAsync(address, credentials, (err) => (err ? reject(new Error(`cannot listen on ${address}: ${err.message}`)) : resolve())),
  );
}

/** Stops a server: in-flight calls get a second to finish, then it is forced. */
export function shutdown(server: grpc.Server, timers: Pick<Timers, 'setTimeout' | 'clearTimeout'>): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = timers.setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, 1_000);
    server.tryShutdown(() => {
      timers.clearTimeout(timer);
      resolve();
    });
  });
}
