// Binding and stopping a grpc.Server: the client listener's, and the peer listener's with the gRPC carrier.
import * as grpc from '@grpc/grpc-js';

/** Binds a server to one address, resolving when it listens. */
export function bind(server: grpc.Server, address: string, credentials: grpc.ServerCredentials): Promise<void> {
  return new Promise<void>((resolve, reject) =>
    server.bindAsync(address, credentials, (err) => (err ? reject(new Error(`cannot listen on ${address}: ${err.message}`)) : resolve())),
  );
}

/** Stops a server: in-flight calls get a second to finish, then it is forced. */
export function shutdown(server: grpc.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, 1_000);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
