// Membership changes, one server at a time (Raft dissertation §4.1, §4.2.3), as the core validates them.
// docs/membership.md has the whole picture.
//
// Why single-server and not joint consensus: every change adds, promotes or removes one member, so the
// majorities of the old and the new configuration always overlap and no change needs two phases. Adding goes
// through a non-voting learner that catches up first, so a change never leaves the cluster waiting on a
// voter with an empty log (§4.2.1). The rules that make one-at-a-time safe are in RawNode.proposeConfChange.
//
// A ConfChange entry carries the WHOLE configuration that results, not the delta: a node replaying the log
// over a different starting point (a member that joined later) still ends at the same configuration, and the
// configuration at any index is simply that of the last ConfChange entry at or before it.

import type { ClusterConfig, MemberAddress, NodeId } from './types';

export type ConfChangeType = 'add-learner' | 'promote' | 'remove';

export interface ConfChange {
  type: ConfChangeType;
  node: NodeId;
  /** add-learner only: where the new member is reached (carried for the application). */
  address?: MemberAddress;
}

/** Bounds on what a configuration entry may hold: far above any real cluster, small enough to check cheaply. */
export const CONFIG_LIMITS = { maxMembers: 64, maxIdLength: 64, maxAddressLength: 255, maxRemembered: 1_024 } as const;

/** A configuration with every optional part filled, members in sorted order. */
export interface FullConfig {
  voters: NodeId[];
  learners: NodeId[];
  addresses: Record<NodeId, MemberAddress>;
  /**
   * Members removed so far, oldest first (the last maxRemembered): a name is never given to a second
   * member, so a node replaying old configurations cannot take another's removal for its own, and a
   * removed machine's certificate never names a member again.
   */
  removed: NodeId[];
}

export function fullConfig(c: ClusterConfig): FullConfig {
  const addresses: Record<NodeId, MemberAddress> = {};
  for (const [id, a] of Object.entries(c.addresses ?? {})) addresses[id] = { client: a.client, peer: a.peer };
  return { voters: [...c.voters].sort(), learners: [...(c.learners ?? [])].sort(), addresses, removed: [...(c.removed ?? [])] };
}

/** `c` with empty parts left out: a configuration without learners or addresses stays `{ voters }`. */
export function storedConfig(c: ClusterConfig): ClusterConfig {
  const out: ClusterConfig = { voters: [...c.voters] };
  if (c.learners !== undefined && c.learners.length > 0) out.learners = [...c.learners];
  const addresses = Object.entries(c.addresses ?? {});
  if (addresses.length > 0) out.addresses = Object.fromEntries(addresses.map(([id, a]) => [id, { client: a.client, peer: a.peer }]));
  if (c.removed !== undefined && c.removed.length > 0) out.removed = [...c.removed];
  return out;
}

export function isMember(c: FullConfig, id: NodeId): boolean {
  return c.voters.includes(id) || c.learners.includes(id);
}

/** Why `change` cannot be made to `c` (one server at a time), or the configuration it results in. */
export function applyConfChange(c: FullConfig, change: ConfChange): FullConfig | string {
  const { node } = change;
  if (typeof node !== 'string' || node.length === 0 || node.length > CONFIG_LIMITS.maxIdLength) return 'the node id must be 1-64 characters';
  switch (change.type) {
    case 'add-learner': {
      if (isMember(c, node)) return `${node} is already a member`;
      if (c.removed.includes(node)) return `${node} was removed from this cluster; add the new machine under a new name`;
      if (c.voters.length + c.learners.length >= CONFIG_LIMITS.maxMembers) return `a cluster has at most ${CONFIG_LIMITS.maxMembers} members`;
      if (change.address === undefined || addressProblem(change.address) !== undefined) return 'a new member needs its client and peer addresses';
      const addresses = { ...c.addresses, [node]: { client: change.address.client, peer: change.address.peer } };
      return { voters: c.voters, learners: [...c.learners, node].sort(), addresses, removed: c.removed };
    }
    case 'promote':
      if (!c.learners.includes(node)) return c.voters.includes(node) ? `${node} is already a voter` : `${node} is not a learner`;
      return { voters: [...c.voters, node].sort(), learners: c.learners.filter((l) => l !== node), addresses: c.addresses, removed: c.removed };
    case 'remove': {
      if (!isMember(c, node)) return `${node} is not a member`;
      if (c.voters.length === 1 && c.voters[0] === node) return 'the last voter cannot be removed';
      const addresses = { ...c.addresses };
      delete addresses[node];
      const removed = [...c.removed, node].slice(-CONFIG_LIMITS.maxRemembered);
      return { voters: c.voters.filter((v) => v !== node), learners: c.learners.filter((l) => l !== node), addresses, removed };
    }
    default:
      return 'unknown change type';
  }
}

function addressProblem(a: unknown): string | undefined {
  if (typeof a !== 'object' || a === null) return 'must be { client, peer }';
  const { client, peer } = a as Record<string, unknown>;
  for (const [k, v] of [['client', client], ['peer', peer]] as const) {
    if (typeof v !== 'string' || v.length === 0 || v.length > CONFIG_LIMITS.maxAddressLength) return `${k} must be 1-255 characters`;
  }
  if (Object.keys(a).some((k) => k !== 'client' && k !== 'peer')) return 'has fields other than client and peer';
  return undefined;
}

/** Why `c` is not a configuration a cluster can run with, or undefined. */
export function configProblem(c: FullConfig): string | undefined {
  const ids = [...c.voters, ...c.learners];
  if (c.voters.length === 0) return 'no voters';
  if (ids.length > CONFIG_LIMITS.maxMembers) return `more than ${CONFIG_LIMITS.maxMembers} members`;
  if (ids.some((id) => typeof id !== 'string' || id.length === 0 || id.length > CONFIG_LIMITS.maxIdLength)) return 'a member id is not 1-64 characters';
  if (new Set(ids).size !== ids.length) return 'a member is listed twice';
  if (c.removed.length > CONFIG_LIMITS.maxRemembered) return `more than ${CONFIG_LIMITS.maxRemembered} removed members`;
  if (c.removed.some((id) => typeof id !== 'string' || ids.includes(id))) return 'a removed member is still listed, or not a name';
  if (new Set(c.removed).size !== c.removed.length) return 'a removed member is listed twice';
  for (const [id, a] of Object.entries(c.addresses)) {
    if (!ids.includes(id)) return `addresses name ${id}, which is no member`;
    const problem = addressProblem(a);
    if (problem !== undefined) return `the address of ${id} ${problem}`;
  }
  return undefined;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** The data of a ConfChange entry: the resulting configuration, as canonical JSON (rare, never on a hot path). */
export function encodeConfigEntry(c: FullConfig): Uint8Array {
  const addresses = Object.fromEntries(Object.keys(c.addresses).sort().map((id) => [id, c.addresses[id]]));
  return encoder.encode(JSON.stringify({ voters: c.voters, learners: c.learners, addresses, removed: c.removed }));
}

/** The configuration in a ConfChange entry's data, or why it is not one. */
export function decodeConfigEntry(data: Uint8Array): FullConfig | string {
  let raw: unknown;
  try {
    raw = JSON.parse(decoder.decode(data));
  } catch {
    return 'not a configuration (JSON)';
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'not a configuration object';
  const { voters, learners, addresses, removed } = raw as Record<string, unknown>;
  if (Object.keys(raw).some((k) => !['voters', 'learners', 'addresses', 'removed'].includes(k))) return 'unknown configuration fields';
  if (!Array.isArray(voters) || !Array.isArray(learners) || !Array.isArray(removed)) return 'voters, learners and removed must be arrays';
  if (typeof addresses !== 'object' || addresses === null || Array.isArray(addresses)) return 'addresses must be an object';
  for (const a of Object.values(addresses as Record<string, unknown>)) if (addressProblem(a) !== undefined) return 'a malformed address';
  const c: FullConfig = fullConfig({ voters: voters as NodeId[], learners: learners as NodeId[], addresses: addresses as Record<NodeId, MemberAddress>, removed: removed as NodeId[] });
  return configProblem(c) ?? c;
}
