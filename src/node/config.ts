import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { isUserName } from '../state/auth/names';
import { isHostPort, isLoopback, isNodeId, memberAddressProblem, NODE_ID_RULE } from './memberAddress';
import { MAX_LOCK_LABEL_DEPTH } from './metrics/lockLabel';
import { unknownKeyReason } from './nearestName';

/**
 * The two addresses of a member: where clients call it, and where its peers dial it. These are the addresses
 * others reach it by (advertised: a host name or IP, never 0.0.0.0), apart from the addresses it binds
 * (`listen`, `peerListen`), which may be 0.0.0.0 or [::].
 */
export interface MemberAddresses {
  client: string;
  peer: string;
}

/** Files of the node's TLS identity (PEM); relative paths are taken relative to the config file. */
export interface TlsConfig {
  ca: string;
  cert: string;
  key: string;
}

/** One node's configuration file (cluster/node1.json and friends). Times in milliseconds. See docs/security.md. */
export interface NodeConfig {
  id: string;
  /**
   * host:port the client listener binds (Session, Lock, KV, Pipeline, Cluster, health, reflection); 0.0.0.0
   * or [::] for every interface. Others reach it at `members[id].client`.
   */
  listen: string;
  /** host:port the peer listener binds (RaftPeer only, mutual TLS). Peers reach it at `members[id].peer`. */
  peerListen: string;
  /** host:port of the Prometheus listener (plain HTTP GET /metrics, docs/metrics.md); absent: none. */
  metricsListen?: string;
  /**
   * host:port of the HTTP listener (the JSON gateway and its event streams, docs/http.md); absent: none.
   * TLS and client certificates as on `listen`; plaintext only with `insecure` (then loopback only).
   */
  httpListen?: string;
  /**
   * The wait and hold time metrics get a `lock` label of this many leading '/'-separated segments of the
   * lock name (0..MAX_LOCK_LABEL_DEPTH); absent or 0: no lock label (docs/metrics.md, cardinality).
   */
  metricsLockLabelDepth?: number;
  /** Every member of the cluster (this node included): id -> its client and peer addresses. */
  members: Record<string, MemberAddresses>;
  /**
   * Where this node dials each peer, when not its `members` peer address (for example through a
   * fault-injecting proxy in tests).
   */
  peerAddresses?: Record<string, string>;
  /** Carried on every peer stream; streams of another cluster are refused. Derived from members by default. */
  clusterId: string;
  /** The node's CA, certificate and key. Required unless `insecure`. */
  tls?: TlsConfig;
  /** Require a client certificate from the cluster CA on the client listener. */
  clientCertAuth: boolean;
  /** Plaintext on both listeners, loopback addresses only. */
  insecure: boolean;
  /**
   * How the peer listener carries Raft messages (src/transport, docs/architecture.md#peer-transport):
   * 'tls', length-prefixed frames over mutual TLS; 'grpc', the RaftPeer gRPC stream. Every member of a
   * cluster must use the same.
   */
  peerCarrier: PeerCarrierName;
  dataDir: string;
  tickMs: number;
  electionTicks: number;
  heartbeatTicks: number;
  /** Take a snapshot and compact the log after this many applied entries. */
  snapshotEveryEntries: number;
  /** Session TTL bounds: the minimum stays well above the election timeout (tickMs * electionTicks * 2). */
  minSessionTtlMs: number;
  maxSessionTtlMs: number;
  logLevel: string;
  /**
   * Start as a learner of a running cluster (its `members` name the current members and this node), and
   * wait to be added with `fencelock member add`. Only read while the data folder is empty.
   */
  join: boolean;
  /**
   * Auth (docs/auth.md): on, and the admin the first leader creates when it turns it on; or off. Required,
   * on loopback too: running without auth is always said in the config, never a default.
   */
  auth: AuthConfig;
  /** OpenTelemetry traces of the calls this node serves, sent by OTLP/HTTP (docs/tracing.md); absent: off. */
  tracing?: TracingConfig;
}

export interface TracingConfig {
  /** The collector's OTLP/HTTP base address, http(s)://host:port (spans go to its /v1/traces). */
  otlpEndpoint: string;
  /** Default `fencelock-<id>`. */
  serviceName?: string;
  /** The share of new traces recorded, 0..1 (default 1); a call that arrives traced follows its caller. */
  sampleRatio?: number;
}

export type PeerCarrierName = 'tls' | 'grpc';
export const PEER_CARRIERS: readonly PeerCarrierName[] = ['tls', 'grpc'];

export interface AuthConfig {
  enabled: boolean;
  /** Required when enabled: the user given the root role. */
  admin?: string;
}

export const CONFIG_DEFAULTS = {
  tickMs: 50,
  electionTicks: 10,
  heartbeatTicks: 2,
  snapshotEveryEntries: 20_000,
  minSessionTtlMs: 3_000,
  maxSessionTtlMs: 300_000,
  logLevel: 'info',
  clientCertAuth: false,
  insecure: false,
  // Length-prefixed frames over mutual TLS: what test/security attacks. 'grpc' stays selectable until the
  // measurement in docs/performance.md ("Peer carrier") says whether it has a reason to exist.
  peerCarrier: 'tls' as PeerCarrierName,
  join: false,
};

/** Every top-level key of a config file (docs/configuration.md lists each; a test keeps the two in step). */
export const KNOWN_FIELDS = new Set<string>([
  'id', 'listen', 'peerListen', 'metricsListen', 'httpListen', 'metricsLockLabelDepth', 'members', 'peerAddresses', 'clusterId', 'tls', 'clientCertAuth', 'insecure', 'dataDir', 'auth', 'tracing',
  ...Object.keys(CONFIG_DEFAULTS),
]);

/** The keys of the nested objects: a member's addresses, `tls` and `auth`. */
export const MEMBER_FIELDS = ['client', 'peer'] as const;
export const TLS_FIELDS = ['ca', 'cert', 'key'] as const;
export const AUTH_FIELDS = ['enabled', 'admin'] as const;
export const TRACING_FIELDS = ['otlpEndpoint', 'serviceName', 'sampleRatio'] as const;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** The default cluster id: a digest of the sorted member ids and peer addresses (like etcd's). */
export function deriveClusterId(members: Record<string, MemberAddresses>): string {
  // Sorted by id in UTF-16 code unit order, as Array.prototype.sort orders strings.
  const byId = ([a]: [string, MemberAddresses], [b]: [string, MemberAddresses]): number => (a < b ? -1 : a > b ? 1 : 0);
  const text = Object.entries(members).sort(byId).map(([id, m]) => `${id}=${m.peer}`).join(',');
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

type Fail = (field: string, why: string) => never;

/** The metrics listener is optional, and never one of the gRPC listeners (it speaks plain HTTP). */
function checkMetricsListen(cfg: NodeConfig, fail: Fail): void {
  if (cfg.metricsListen === undefined) return;
  if (typeof cfg.metricsListen !== 'string' || !isHostPort(cfg.metricsListen)) fail('metricsListen', 'must be host:port (plain HTTP, GET /metrics)');
  for (const other of ['listen', 'peerListen'] as const) {
    if (portOf(cfg.metricsListen) === portOf(cfg[other])) fail('metricsListen', `must not use the port of ${other} (${cfg[other]}): metrics have a listener of their own`);
  }
}

/** The HTTP listener is optional, on a port of its own, and plaintext only where gRPC is (loopback). */
function checkHttpListen(cfg: NodeConfig, fail: Fail): void {
  if (cfg.httpListen === undefined) return;
  if (typeof cfg.httpListen !== 'string' || !isHostPort(cfg.httpListen)) fail('httpListen', 'must be host:port (the HTTP gateway, docs/http.md)');
  for (const other of ['listen', 'peerListen', 'metricsListen'] as const) {
    const taken = cfg[other];
    if (taken !== undefined && portOf(cfg.httpListen) === portOf(taken)) fail('httpListen', `must not use the port of ${other} (${taken}): the gateway has a listener of its own`);
  }
  if (cfg.insecure && !isLoopback(cfg.httpListen)) fail('httpListen', 'is not a loopback address; plaintext ("insecure": true) is only allowed on 127.0.0.1, ::1 or localhost');
}

/** Each lock label value is a series per cause: the depth stays small and is a whole number. */
function checkMetricsLockLabelDepth(cfg: NodeConfig, fail: Fail): void {
  const depth = cfg.metricsLockLabelDepth;
  if (depth === undefined) return;
  if (!Number.isInteger(depth) || depth < 0 || depth > MAX_LOCK_LABEL_DEPTH) fail('metricsLockLabelDepth', `must be an integer from 0 to ${MAX_LOCK_LABEL_DEPTH}`);
}

function portOf(hostPort: string): string {
  return hostPort.slice(hostPort.lastIndexOf(':') + 1);
}

function checkMembers(cfg: NodeConfig, fail: Fail): void {
  if (typeof cfg.members !== 'object' || cfg.members === null) fail('members', 'must map node ids to { "client": host:port, "peer": host:port }');
  for (const [id, m] of Object.entries(cfg.members)) {
    if (!isNodeId(id)) fail(`members.${id}`, `node ids are ${NODE_ID_RULE}`);
    if (typeof m !== 'object' || m === null) fail(`members.${id}`, 'must be { "client": host:port, "peer": host:port }');
    for (const k of Object.keys(m)) if (!(MEMBER_FIELDS as readonly string[]).includes(k)) fail(`members.${id}.${k}`, unknownKeyReason(k, MEMBER_FIELDS, `members.${id}.`));
    for (const k of MEMBER_FIELDS) {
      const problem = memberAddressProblem(m[k]);
      if (problem) fail(`members.${id}.${k}`, problem);
    }
  }
  if (!(cfg.id in cfg.members)) fail('members', `must include this node's own id "${cfg.id}"`);
  for (const [id, addr] of Object.entries(cfg.peerAddresses ?? {})) {
    if (!(id in cfg.members)) fail(`peerAddresses.${id}`, 'names no member');
    const problem = memberAddressProblem(addr);
    if (problem) fail(`peerAddresses.${id}`, problem);
  }
}

function checkSecurity(cfg: NodeConfig, fail: Fail): void {
  for (const field of ['clientCertAuth', 'insecure', 'join'] as const) if (typeof cfg[field] !== 'boolean') fail(field, 'must be true or false');
  if (typeof cfg.clusterId !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(cfg.clusterId)) fail('clusterId', 'must be 1-64 letters, digits, ., - or _');
  if (!PEER_CARRIERS.includes(cfg.peerCarrier)) fail('peerCarrier', `must be one of ${PEER_CARRIERS.map((c) => `"${c}"`).join(', ')}`);
  if (cfg.insecure) {
    if (cfg.tls !== undefined) fail('tls', 'must not be set together with "insecure": true');
    if (cfg.clientCertAuth) fail('clientCertAuth', 'needs TLS; remove "insecure": true');
    for (const field of ['listen', 'peerListen'] as const) {
      if (!isLoopback(cfg[field])) fail(field, `is not a loopback address; plaintext ("insecure": true) is only allowed on 127.0.0.1, ::1 or localhost`);
    }
    return;
  }
  if (typeof cfg.tls !== 'object' || cfg.tls === null) fail('tls', 'is required: { "ca", "cert", "key" } PEM files (make them with `fencelock certs init`), or set "insecure": true for plaintext on loopback');
  for (const k of Object.keys(cfg.tls)) if (!(TLS_FIELDS as readonly string[]).includes(k)) fail(`tls.${k}`, unknownKeyReason(k, TLS_FIELDS, 'tls.'));
  for (const k of TLS_FIELDS) {
    if (typeof cfg.tls[k] !== 'string' || cfg.tls[k].length === 0) fail(`tls.${k}`, 'must be a file path');
  }
}

/** The refusal of a config without `auth`: both choices, so that running without auth is a decision. */
export const AUTH_REQUIRED =
  'is required: "auth": { "enabled": true, "admin": NAME } to turn auth on (NAME: the user named in the admin\'s client certificate; docs/auth.md "Bootstrap"), or "auth": { "enabled": false } to serve without auth on purpose (for development)';

function checkAuth(auth: AuthConfig | undefined, fail: Fail): void {
  // No default, on loopback too: a node never runs without auth because a section was forgotten.
  if (auth === undefined) fail('auth', AUTH_REQUIRED);
  if (typeof auth !== 'object' || auth === null) fail('auth', 'must be { "enabled": true|false, "admin": NAME }');
  for (const k of Object.keys(auth)) if (!(AUTH_FIELDS as readonly string[]).includes(k)) fail(`auth.${k}`, unknownKeyReason(k, AUTH_FIELDS, 'auth.'));
  if (typeof auth.enabled !== 'boolean') fail('auth.enabled', 'must be true or false');
  if (auth.admin !== undefined && (typeof auth.admin !== 'string' || !isUserName(auth.admin))) {
    fail('auth.admin', 'must be a user name: 1-128 letters, digits, ., _, @ or -, starting with a letter or digit');
  }
  if (auth.enabled && auth.admin === undefined) fail('auth.admin', 'is required with "enabled": true: the user the first leader makes admin (the name in its client certificate)');
}

function checkTracing(tracing: TracingConfig | undefined, fail: Fail): void {
  if (tracing === undefined) return;
  if (typeof tracing !== 'object' || tracing === null) fail('tracing', 'must be { "otlpEndpoint": URL, "serviceName": NAME, "sampleRatio": 0..1 }');
  for (const k of Object.keys(tracing)) if (!(TRACING_FIELDS as readonly string[]).includes(k)) fail(`tracing.${k}`, unknownKeyReason(k, TRACING_FIELDS, 'tracing.'));
  if (typeof tracing.otlpEndpoint !== 'string' || !/^https?:\/\/[^/\s]+(\/\S*)?$/.test(tracing.otlpEndpoint)) fail('tracing.otlpEndpoint', 'must be an http:// or https:// address of an OTLP/HTTP collector (http://host:4318)');
  if (tracing.serviceName !== undefined && (typeof tracing.serviceName !== 'string' || tracing.serviceName === '')) fail('tracing.serviceName', 'must be a non-empty string');
  const ratio = tracing.sampleRatio;
  if (ratio !== undefined && (typeof ratio !== 'number' || !(ratio >= 0 && ratio <= 1))) fail('tracing.sampleRatio', 'must be a number from 0 to 1');
}

/** Fills defaults and checks every field, so a typo stops the node at start with a message that says what. */
export function validateConfig(raw: unknown, origin = 'config'): NodeConfig {
  if (typeof raw !== 'object' || raw === null) throw new ConfigError(`${origin}: expected a JSON object`);
  const fail: Fail = (field, why) => {
    throw new ConfigError(`${origin}: field "${field}" ${why}`);
  };
  for (const k of Object.keys(raw)) if (!KNOWN_FIELDS.has(k)) fail(k, unknownKeyReason(k, [...KNOWN_FIELDS]));
  const cfg = { ...CONFIG_DEFAULTS, ...(raw as Partial<NodeConfig>) } as NodeConfig;
  if (!isNodeId(cfg.id)) fail('id', `must be ${NODE_ID_RULE}`);
  if (!isHostPort(cfg.listen)) fail('listen', 'must be host:port');
  if (!isHostPort(cfg.peerListen)) fail('peerListen', 'must be host:port (the peer listener, apart from the client listener)');
  if (cfg.peerListen === cfg.listen) fail('peerListen', 'must differ from listen: peers and clients have listeners of their own');
  checkMetricsListen(cfg, fail);
  checkHttpListen(cfg, fail);
  checkMetricsLockLabelDepth(cfg, fail);
  checkMembers(cfg, fail);
  cfg.clusterId ??= deriveClusterId(cfg.members);
  checkSecurity(cfg, fail);
  if (typeof cfg.dataDir !== 'string' || cfg.dataDir.length === 0) fail('dataDir', 'must be a directory path');
  for (const field of ['tickMs', 'electionTicks', 'heartbeatTicks', 'snapshotEveryEntries', 'minSessionTtlMs', 'maxSessionTtlMs'] as const) {
    if (!Number.isInteger(cfg[field]) || cfg[field] <= 0) fail(field, 'must be a positive integer');
  }
  if (!LOG_LEVELS.includes(cfg.logLevel)) fail('logLevel', `must be one of ${LOG_LEVELS.join(', ')}`);
  if (cfg.heartbeatTicks >= cfg.electionTicks) fail('heartbeatTicks', 'must be below electionTicks');
  const electionTimeoutMs = cfg.tickMs * cfg.electionTicks;
  // A lease must outlive a failover: up to two election timeouts pass before a new leader restarts deadlines.
  if (cfg.minSessionTtlMs < 3 * electionTimeoutMs) {
    fail('minSessionTtlMs', `must be at least 3 election timeouts (${3 * electionTimeoutMs} ms)`);
  }
  if (cfg.maxSessionTtlMs < cfg.minSessionTtlMs) fail('maxSessionTtlMs', 'must be >= minSessionTtlMs');
  checkAuth(cfg.auth, fail);
  checkTracing(cfg.tracing, fail);
  if (cfg.join && Object.keys(cfg.members).length < 2) fail('join', 'needs the running members in "members" besides this node: it learns the rest from them');
  return cfg;
}

/** Reads a config file; a relative dataDir and TLS file paths are taken relative to the file's folder. */
export function loadConfig(file: string, overrides: { join?: boolean } = {}): NodeConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config ${file}: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`config ${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (overrides.join === true && typeof raw === 'object' && raw !== null) raw = { ...raw, join: true };
  const cfg = validateConfig(raw, file);
  const resolve = (p: string): string => (path.isAbsolute(p) ? p : path.resolve(path.dirname(file), p));
  cfg.dataDir = resolve(cfg.dataDir);
  if (cfg.tls) cfg.tls = { ca: resolve(cfg.tls.ca), cert: resolve(cfg.tls.cert), key: resolve(cfg.tls.key) };
  return cfg;
}
