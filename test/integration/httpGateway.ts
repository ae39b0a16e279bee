// Clusters with the HTTP gateway on (`httpListen` on every node) and a small HTTP client for them: JSON calls
// and server-sent event streams over real HTTPS connections, with a client certificate, a bearer token or
// neither. No retries and no leader following: each call goes where it is sent and says what it got.
import { readFileSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as path from 'node:path';
import type { Pem } from '../security/certs';
import { clusterWithLeader, type ClusterWithClient } from './clusterWithLeader';
import { freePorts, LocalCluster, eventually, type ClusterOptions } from './harness';
import { FenceLockClient } from '../../src/client';

export type Obj = Record<string, unknown>;

export interface HttpCluster extends ClusterWithClient {
  /** The HTTP address (host:port) of each node, by id. */
  http: Map<string, string>;
  /** The HTTP address of the node the cluster's status names leader. */
  leaderHttp(): Promise<string>;
}

/** A cluster whose every node also serves the gateway; resolves once a client sees a leader. */
export async function httpCluster(opts: ClusterOptions = {}): Promise<HttpCluster> {
  const cluster = await LocalCluster.create(opts);
  const ports = await freePorts(cluster.nodes.length);
  const addresses = new Map<string, string>();
  for (const [i, node] of cluster.nodes.entries()) {
    const config = JSON.parse(readFileSync(node.configFile, 'utf8')) as Obj;
    const address = `127.0.0.1:${ports[i]}`;
    writeFileSync(node.configFile, JSON.stringify({ ...config, httpListen: address }, null, 2));
    addresses.set(node.id, address);
  }
  cluster.startAll();
  const client = new FenceLockClient({ endpoints: cluster.endpoints, requestTimeoutMs: 3_000, totalTimeoutMs: 20_000 });
  await eventually(async () => ((await client.statusAll()).some((s) => s.ok && s.status.role === 'leader') ? true : undefined), 30_000, 'a leader');
  const leaderHttp = async (): Promise<string> => addresses.get((await client.status()).leader)!;
  return { cluster, client, http: addresses, leaderHttp };
}

export { clusterWithLeader };

export interface Caller {
  cert?: Pem;
  token?: string;
}

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Obj;
  text: string;
}

export interface RequestOptions extends Caller {
  method?: 'GET' | 'POST' | 'PUT';
  /** A JSON value (sent as application/json) or raw text (sent with `contentType`). */
  json?: unknown;
  raw?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

/** TLS options for a connection to a node of the cluster whose certificates are in `certsDir`. */
export function tlsOf(certsDir: string, who: Caller = {}): https.RequestOptions {
  return {
    ca: readFileSync(path.join(certsDir, 'ca.pem')),
    ...(who.cert ? { cert: who.cert.certPem, key: who.cert.keyPem } : {}),
    agent: false,
  };
}

/** One HTTPS request to `address` (host:port); resolves with the answer, whatever its status. */
export function request(address: string, certsDir: string, route: string, opts: RequestOptions = {}): Promise<HttpAnswer> {
  const [host, port] = address.split(':');
  const payload = opts.json !== undefined ? JSON.stringify(opts.json) : opts.raw;
  const headers: Record<string, string> = { ...opts.headers };
  if (payload !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  return new Promise((resolve, reject) => {
    const req = https.request({ host, port: Number(port), path: route, method: opts.method ?? (payload === undefined ? 'GET' : 'POST'), headers, ...tlsOf(certsDir, opts) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: Obj = {};
        try {
          body = JSON.parse(text) as Obj;
        } catch {
          // not JSON: the text says what it is
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** An open server-sent event stream: its events as they come, and how it ended. */
export interface EventStream {
  status: number;
  body: Obj;
  events: Array<{ event: string; data: Obj }>;
  comments: number;
  /** Resolves when the server ends the stream (or the connection closes). */
  ended: Promise<void>;
  close(): void;
}

/** GETs an event stream; resolves once the answer's headers came (a refusal: status and JSON body, no events). */
export function openEvents(address: string, certsDir: string, route: string, who: Caller = {}): Promise<EventStream> {
  const [host, port] = address.split(':');
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (who.token !== undefined) headers.authorization = `Bearer ${who.token}`;
  return new Promise((resolve, reject) => {
    const req = https.request({ host, port: Number(port), path: route, method: 'GET', headers, ...tlsOf(certsDir, who) }, (res) => {
      let endStream: () => void = () => undefined;
      const stream: EventStream = {
        status: res.statusCode ?? 0,
        body: {},
        events: [],
        comments: 0,
        ended: new Promise((r) => (endStream = r)),
        close: () => req.destroy(),
      };
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
          parseEvent(buffer.slice(0, at), stream);
          buffer = buffer.slice(at + 2);
        }
      });
      res.on('end', () => {
        if (stream.status !== 200 && buffer !== '') stream.body = JSON.parse(buffer) as Obj;
        endStream();
      });
      res.on('close', () => endStream());
      res.on('error', () => endStream());
      resolve(stream);
    });
    req.on('error', reject);
    req.end();
  });
}

function parseEvent(block: string, stream: EventStream): void {
  let event = 'message';
  let data = '';
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) stream.comments += 1;
    else if (line.startsWith('event: ')) event = line.slice(7);
    else if (line.startsWith('data: ')) data += line.slice(6);
  }
  if (data !== '') stream.events.push({ event, data: JSON.parse(data) as Obj });
}

/** Resolves with `p`'s outcome, or 'pending' if it has none within `ms`. */
export function within<T>(p: Promise<T>, ms: number): Promise<T | 'pending'> {
  return Promise.race([p, new Promise<'pending'>((r) => setTimeout(() => r('pending'), ms))]);
}

/**
 * `request` at the leader, following NOT_LEADER answers as a client would (an election under load may move
 * the leader between calls): safe to repeat, since every mutating request carries its request id.
 */
export async function atLeader(k: HttpCluster, route: string, opts: RequestOptions = {}): Promise<HttpAnswer> {
  return eventually(
    async () => {
      const answer = await request(await k.leaderHttp(), k.cluster.certsDir!, route, opts);
      return answer.status === 503 ? undefined : answer;
    },
    20_000,
    `an answer from the leader to ${route}`,
  );
}
