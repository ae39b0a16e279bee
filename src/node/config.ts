import { readFileSync } from 'node:fs';
import * as path from 'node:path';

/** One node's configuration file (cluster/node1.json and friends). Times in milliseconds. */
export interface NodeConfig {
  id: string;
  /** host:port this node listens on, for clients and peers alike. */
  listen: string;
  /** Every member of the cluster (this node included): id -> host:port. */
  members: Record<string, string>;
  /**
   * Where this node dials each peer, when not its `members` address (for example through a fault-injecting
   * proxy in tests). Clients are always pointed at `members` addresses.
   */
  peerAddresses?: Record<string, string>;
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
}

export const CONFIG_DEFAULTS: Omit<NodeConfig, 'id' | 'listen' | 'members' | 'dataDir'> = {
  tickMs: 50,
  electionTicks: 10,
  heartbeatTicks: 2,
  snapshotEveryEntries: 20_000,
  minSessionTtlMs: 3_000,
  maxSessionTtlMs: 300_000,
  logLevel: 'info',
};

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const HOST_PORT = /^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/;

/** Fills defaults and checks every field, so a typo stops the node at start with a message that says what. */
export function validateConfig(raw: unknown, origin = 'config'): NodeConfig {
  if (typeof raw !== 'object' || raw === null) throw new ConfigError(`${origin}: expected a JSON object`);
  const cfg = { ...CONFIG_DEFAULTS, ...(raw as Partial<NodeConfig>) } as NodeConfig;
  const fail = (field: string, why: string): never => {
    throw new ConfigError(`${origin}: field "${field}" ${why}`);
  };
  if (typeof cfg.id !== 'string' || !/^[A-Za-z0-9_-]{1,32}$/.test(cfg.id)) fail('id', 'must be 1-32 letters, digits, - or _');
  if (typeof cfg.listen !== 'string' || !HOST_PORT.test(cfg.listen)) fail('listen', 'must be host:port');
  if (typeof cfg.members !== 'object' || cfg.members === null) fail('members', 'must map node ids to host:port');
  for (const [id, addr] of Object.entries(cfg.members)) {
    if (typeof addr !== 'string' || !HOST_PORT.test(addr)) fail(`members.${id}`, 'must be host:port');
  }
  if (!(cfg.id in cfg.members)) fail('members', `must include this node's own id "${cfg.id}"`);
  for (const [id, addr] of Object.entries(cfg.peerAddresses ?? {})) {
    if (!(id in cfg.members)) fail(`peerAddresses.${id}`, 'names no member');
    if (typeof addr !== 'string' || !HOST_PORT.test(addr)) fail(`peerAddresses.${id}`, 'must be host:port');
  }
  if (typeof cfg.dataDir !== 'string' || cfg.dataDir.length === 0) fail('dataDir', 'must be a directory path');
  for (const field of ['tickMs', 'electionTicks', 'heartbeatTicks', 'snapshotEveryEntries', 'minSessionTtlMs', 'maxSessionTtlMs'] as const) {
    if (!Number.isInteger(cfg[field]) || cfg[field] <= 0) fail(field, 'must be a positive integer');
  }
  if (cfg.heartbeatTicks >= cfg.electionTicks) fail('heartbeatTicks', 'must be below electionTicks');
  const electionTimeoutMs = cfg.tickMs * cfg.electionTicks;
  // A lease must outlive a failover: up to two election timeouts pass before a new leader restarts deadlines.
  if (cfg.minSessionTtlMs < 3 * electionTimeoutMs) {
    fail('minSessionTtlMs', `must be at least 3 election timeouts (${3 * electionTimeoutMs} ms)`);
  }
  if (cfg.maxSessionTtlMs < cfg.minSessionTtlMs) fail('maxSessionTtlMs', 'must be >= minSessionTtlMs');
  return cfg;
}

/** Reads a config file; a relative dataDir is taken relative to the file's folder. */
export function loadConfig(file: string): NodeConfig {
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
  const cfg = validateConfig(raw, file);
  if (!path.isAbsolute(cfg.dataDir)) cfg.dataDir = path.resolve(path.dirname(file), cfg.dataDir);
  return cfg;
}
