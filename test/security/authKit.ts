// Callers of every kind for the auth tests: a client certificate naming someone (from the cluster CA), a
// bearer token, both, or nothing at all; each a raw gRPC client on one node that says exactly what it is
// told (no retries, no leader following).
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { clientIdentityUri } from '../../src/certs/identity';
import { withoutIpServerName } from '../../src/client/ipServerName';
import { v1 } from '../integration/rawClient';
import { issueFromCa, type Pem } from './certs';

type Obj = Record<string, unknown>;
export type Service = 'Session' | 'Lock' | 'Semaphore' | 'KV' | 'Cluster' | 'Auth' | 'Pipeline';
const SERVICES: Service[] = ['Session', 'Lock', 'Semaphore', 'KV', 'Cluster', 'Auth', 'Pipeline'];

export interface Who {
  /** A client certificate from the cluster CA naming this identity (urn:fencelock:client:NAME). */
  cert?: Pem;
  /** Sent as `authorization: Bearer <token>`. */
  token?: string;
}

export interface AuthedClient {
  call(service: Service, method: string, req: Obj, timeoutMs?: number): Promise<Obj>;
  /** A bidirectional stream (Session.KeepAlive, Pipeline.Calls). */
  duplex(service: Service, method: string): grpc.ClientDuplexStream<Obj, Obj>;
  /** A server stream (Lock.Watch). */
  serverStream(service: Service, method: string, req: Obj): grpc.ClientReadableStream<Obj>;
  close(): void;
}

/** A certificate naming `name`, from the cluster CA in `certsDir`. */
export function certFor(certsDir: string, name: string): Pem {
  return issueFromCa(certsDir, { commonName: name, uri: clientIdentityUri(name), hosts: [], server: false, days: 1 });
}

export function authedClient(address: string, certsDir: string, who: Who): AuthedClient {
  const ca = readFileSync(path.join(certsDir, 'ca.pem'));
  const creds = who.cert
    ? withoutIpServerName(grpc.credentials.createSsl(ca, Buffer.from(who.cert.keyPem), Buffer.from(who.cert.certPem)))
    : withoutIpServerName(grpc.credentials.createSsl(ca));
  const clients = Object.fromEntries(SERVICES.map((s) => [s, new v1[s]!(address, creds)])) as unknown as Record<Service, grpc.Client>;
  const metadata = (): grpc.Metadata => {
    const md = new grpc.Metadata();
    if (who.token !== undefined) md.set('authorization', `Bearer ${who.token}`);
    return md;
  };
  const method = (service: Service, name: string): ((...args: unknown[]) => unknown) => {
    const fn = (clients[service] as unknown as Record<string, (...a: unknown[]) => unknown>)[name];
    if (!fn) throw new Error(`${service} has no method ${name}`);
    return fn.bind(clients[service]);
  };
  return {
    call(service, name, req, timeoutMs = 5_000) {
      return new Promise((resolve, reject) => {
        method(service, name)(req, metadata(), { deadline: Date.now() + timeoutMs }, (err: grpc.ServiceError | null, res: Obj) => (err ? reject(err) : resolve(res)));
      });
    },
    duplex: (service, name) => method(service, name)(metadata()) as grpc.ClientDuplexStream<Obj, Obj>,
    serverStream: (service, name, req) => method(service, name)(req, metadata()) as grpc.ClientReadableStream<Obj>,
    close() {
      for (const c of Object.values(clients)) grpc.getClientChannel(c).close();
    },
  };
}

/** The gRPC status code a call ended with (0 = OK). */
export async function statusOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return grpc.status.OK;
  } catch (err) {
    return (err as grpc.ServiceError).code;
  }
}
