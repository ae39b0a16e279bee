// A raw gRPC client for integration tests: no retries, no leader following, no validation, so that tests
// can send exactly what they mean (including bad input) to exactly one node.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoFile } from '../../src/codec/protoPath';
import { testCredentials } from './harness';

const PROTO = protoFile('fencelock/v1/lock.proto');
const def = protoLoader.loadSync(PROTO, { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true });
/** The generated client constructors of fencelock.v1 (Session, Lock, KV, Cluster, Pipeline). */
export const v1 = (grpc.loadPackageDefinition(def) as unknown as { fencelock: { v1: Record<string, grpc.ServiceClientConstructor> } }).fencelock.v1;

type Obj = Record<string, unknown>;

export interface RawNodeClient {
  address: string;
  call(service: 'Session' | 'Lock' | 'KV' | 'Cluster', method: string, req: Obj, timeoutMs?: number): Promise<Obj>;
  keepAliveStream(): grpc.ClientDuplexStream<Obj, Obj>;
  /** A new Pipeline.Calls stream (CallRequest in, CallResponse out), as raw as the rest. */
  pipelineStream(): grpc.ClientDuplexStream<Obj, Obj>;
  close(): void;
}

export function rawClient(address: string): RawNodeClient {
  const clients: Record<string, grpc.Client> = {};
  for (const name of ['Session', 'Lock', 'KV', 'Cluster', 'Pipeline']) clients[name] = new v1[name](address, testCredentials());
  return {
    address,
    call(service, method, req, timeoutMs = 5_000) {
      return new Promise((resolve, reject) => {
        const client = clients[service] as unknown as Record<string, (...a: unknown[]) => void>;
        client[method].call(clients[service], req, { deadline: Date.now() + timeoutMs }, (err: grpc.ServiceError | null, res: Obj) =>
          err ? reject(err) : resolve(res),
        );
      });
    },
    keepAliveStream() {
      return (clients.Session as unknown as { KeepAlive: () => grpc.ClientDuplexStream<Obj, Obj> }).KeepAlive();
    },
    pipelineStream() {
      return (clients.Pipeline as unknown as { Calls: () => grpc.ClientDuplexStream<Obj, Obj> }).Calls();
    },
    close() {
      // Session.Close shadows Client.close in generated grpc-js clients: close the channel directly.
      for (const c of Object.values(clients)) grpc.getClientChannel(c).close();
    },
  };
}

/**
 * A new request header. Without `clientId`, under a client id of its own (request 1). With one, that
 * client's request ids count from 1, as the client library's do: a client id the cluster has no record of
 * must start at 1 (a higher id may be a retry whose record was forgotten, and is refused REQUEST_TOO_OLD).
 */
const nextRequestId = new Map<string, number>();
let anonymousClients = 0;
export function header(clientId?: string): Obj {
  if (clientId === undefined) return { clientId: `it-client-${process.pid}-${++anonymousClients}`, requestId: '1' };
  const id = (nextRequestId.get(clientId) ?? 0) + 1;
  nextRequestId.set(clientId, id);
  return { clientId, requestId: String(id) };
}

/**
 * The membership and the commit index as `node` reports them: what a proposal would change. A follower's `match`
 * is left out because replication catching up moves it with nothing proposed (CI saw one go from 2 to 3 between
 * two reads).
 */
export async function membershipNow(node: RawNodeClient): Promise<{ commit: string; members: string }> {
  const list = await node.call('Cluster', 'MemberList', {});
  const members = (list.members as Array<Record<string, unknown>>).map(({ match: _progress, ...member }) => member);
  return { commit: String(list.commit), members: JSON.stringify(members) };
}
