// The frame of every attack test: a TLS cluster of real node processes, a recorded workload running while
// the attack is sent, and the checks afterwards (attack refused, leader kept, nothing forged in any node's
// state, the history linearizable).
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { generateDevCerts } from '../../src/certs/generate';
import { FenceLockClient, type NodeStatus } from '../../src/client';
import { CONFIG_DEFAULTS, deriveClusterId, type MemberAddresses, type PeerCarrierName } from '../../src/node/config';
import { RAFT_NUMBER_LIMIT, type Message, type NodeId } from '../../src/raft/types';
import { Workload } from '../chaos/workload';
import { checkHistory } from '../checker';
import { eventually, LocalCluster, type ClusterOptions } from '../integration/harness';
import { header, rawClient, type RawNodeClient } from '../integration/rawClient';
import { credentialsFrom, sendForged, type PeerCredentials, type PeerStreamResult, type Plant } from './forge';

export const SPOOF_WARNING = 'dropping peer messages whose sender is not the authenticated peer';
export const FOREIGN_CLUSTER_ID = 'another-cluster-0001';

export interface AttackCluster {
  cluster: LocalCluster;
  /** The peer carrier every node runs, and so the one the attacks speak. */
  carrier: PeerCarrierName;
  client: FenceLockClient;
  raw: Map<NodeId, RawNodeClient>;
  ids: NodeId[];
  clusterId: string;
  certsDir: string;
  /** Certificates with the same identities (n1.., client) from another CA. */
  foreignCertsDir: string;
  electionTimeoutMs: number;
}

export async function startAttackCluster(opts: ClusterOptions = {}): Promise<AttackCluster> {
  // A longer election timeout than the default, so that a loaded 2-core machine does not hold elections of
  // its own while the test asserts that the leader and term did not move.
  const tickMs = opts.tickMs ?? CONFIG_DEFAULTS.tickMs;
  const electionTicks = opts.electionTicks ?? 20;
  const cluster = await LocalCluster.create({ ...opts, tickMs, electionTicks, minSessionTtlMs: 3 * tickMs * electionTicks });
  cluster.startAll();
  const certsDir = cluster.certsDir!;
  const foreignCertsDir = path.join(cluster.dir, 'foreign-certs');
  const ids = cluster.nodes.map((n) => n.id);
  await generateDevCerts(foreignCertsDir, { nodes: ids, client: 'test' });
  const members = (JSON.parse(readFileSync(cluster.nodes[0]!.configFile, 'utf8')) as { members: Record<string, MemberAddresses> }).members;
  const client = new FenceLockClient({ endpoints: cluster.endpoints, requestTimeoutMs: 2_000, totalTimeoutMs: 10_000 });
  const raw = new Map(cluster.nodes.map((n) => [n.id, rawClient(n.address)]));
  const carrier = opts.peerCarrier ?? CONFIG_DEFAULTS.peerCarrier;
  const k: AttackCluster = { cluster, carrier, client, raw, ids, clusterId: deriveClusterId(members), certsDir, foreignCertsDir, electionTimeoutMs: tickMs * electionTicks };
  await stableCluster(k);
  return k;
}

export async function stopAttackCluster(k: AttackCluster | undefined): Promise<void> {
  if (!k) return;
  for (const r of k.raw.values()) r.close();
  await k.client.close().catch(() => undefined);
  await k.cluster.destroy();
}

export interface ClusterView {
  leader: NodeStatus;
  byId: Map<NodeId, NodeStatus>;
  followers: NodeId[];
}

/** Every node answers, one leader, and every node agrees on it and on the term. */
export async function stableCluster(k: AttackCluster, timeoutMs = 20_000): Promise<ClusterView> {
  let seen = 'no status yet';
  return eventually(async () => {
    const all = await k.client.statusAll();
    seen = all.map((s) => (s.ok ? `${s.status.id}: ${s.status.role} term ${s.status.term} leader "${s.status.leader}"` : `${s.endpoint}: ${s.error.message}`)).join('; ');
    if (!all.every((s) => s.ok)) return undefined;
    const st = all.map((s) => (s as { status: NodeStatus }).status);
    const leaders = st.filter((s) => s.role === 'leader');
    if (leaders.length !== 1) return undefined;
    const leader = leaders[0]!;
    if (!st.every((s) => s.leader === leader.id && s.term === leader.term)) return undefined;
    return { leader, byId: new Map(st.map((s) => [s.id, s])), followers: st.filter((s) => s.id !== leader.id).map((s) => s.id) };
  }, timeoutMs, 'a stable cluster (one leader, every node agreeing on it and its term)').catch((err: Error) => {
    throw new Error(`${err.message}; last seen: ${seen}`);
  });
}

// ---- the recorded workload ----------------------------------------------------------------------------------

/**
 * Runs `attack` while a small recorded workload (3 clients, acquire / fenced write / maybe get / release on a
 * handful of locks) runs; then stops the workload, reads the final state and checks the history.
 */
export async function underWorkload<T>(k: AttackCluster, tag: string, attack: (view: ClusterView) => Promise<T>): Promise<{ before: ClusterView; value: T }> {
  const before = await stableCluster(k);
  const workload = new Workload({
    endpoints: k.cluster.endpoints,
    clients: 3,
    hotLocks: 3,
    coldLocks: 3,
    hotProbability: 0.7,
    waitTimeoutMs: 1_000,
    sessionTtlMs: 3 * k.electionTimeoutMs + 2_000,
    requestTimeoutMs: 2_000,
    totalTimeoutMs: 8_000,
    thinkMs: 20,
    namespace: `sec-${tag}`,
    seed: tag.split('').reduce((a, c) => a * 31 + c.charCodeAt(0), 7) >>> 0,
  });
  workload.start();
  let value: T;
  try {
    await sleep(500);
    const note = workload.recorder.fault(`attack:${tag}`, []);
    value = await attack(before);
    workload.recorder.endFault(note);
    await sleep(1_000);
  } finally {
    await workload.stop();
  }
  const stats = workload.stats();
  expect(stats.writesOk, `the workload made progress during ${tag}: ${JSON.stringify(stats)}`).toBeGreaterThan(0);
  const finalState = await workload.readFinalState();
  const verdict = checkHistory(workload.recorder.history(), { finalState, budgetMs: 30_000 });
  expect(verdict.ok, verdict.report).toBe(true);
  return { before, value };
}

// ---- checks -------------------------------------------------------------------------------------------------

/** The same leader at the same term on every node as before the attack; no node's commit beyond its log. */
export async function expectLeaderKept(k: AttackCluster, before: ClusterView): Promise<ClusterView> {
  const after = await stableCluster(k, 3 * k.electionTimeoutMs);
  expect(after.leader.id, 'the leader did not change').toBe(before.leader.id);
  expect(after.leader.term, 'the term did not move').toBe(before.leader.term);
  const leaderLast = (await k.client.status(after.leader.address)).lastIndex;
  for (const s of after.byId.values()) {
    expect(s.term, `${s.id}: term`).toBe(before.leader.term);
    expect(s.commit <= s.lastIndex, `${s.id}: commit ${s.commit} within its log (last ${s.lastIndex})`).toBe(true);
    expect(s.lastIndex <= leaderLast, `${s.id}: no entries beyond the leader's log (${s.lastIndex} > ${leaderLast})`).toBe(true);
  }
  return after;
}

/**
 * The leader stays, or the cluster has one again (every node agreeing) within an election timeout of the
 * attack; in both cases no node sits at a forged term.
 */
export async function expectLeaderKeptOrRecovered(k: AttackCluster, before: ClusterView, forgedTerm: number): Promise<ClusterView> {
  const after = await stableCluster(k, 2 * k.electionTimeoutMs + 2_000);
  for (const s of after.byId.values()) {
    expect(Number(s.term) < forgedTerm, `${s.id}: term ${s.term} is below the forged term ${forgedTerm}`).toBe(true);
    expect(s.commit <= s.lastIndex, `${s.id}: commit within its log`).toBe(true);
  }
  if (after.leader.id !== before.leader.id || after.leader.term !== before.leader.term) {
    expect(Number(after.leader.term - before.leader.term), 'at most a couple of real elections').toBeLessThanOrEqual(3);
  }
  return after;
}

/** Nothing the forgery planted exists: the session id does not work, the lock is free, the key unwritten on any node. */
export async function expectNotPlanted(k: AttackCluster, plant: Plant): Promise<void> {
  const view = await stableCluster(k);
  const leader = k.raw.get(view.leader.id)!;
  // A client id of this cluster's own: request ids count per client id in this process, and a cluster that
  // never saw the earlier ones refuses a later one (the file runs a cluster per carrier).
  const err = await leader
    .call('Lock', 'Acquire', { header: header(`sec-probe-${k.clusterId}`), lock: `${plant.lock}-probe`, sessionId: plant.sessionId, waitTimeoutMs: '0' })
    .then(() => null, (e: grpc.ServiceError) => e);
  expect(err, 'the forged session id is refused').not.toBeNull();
  expect(grpc.status[err!.code], err!.details).toBe('NOT_FOUND');
  const d = await leader.call('Lock', 'Describe', { lock: plant.lock });
  expect(d.held, `forged lock ${plant.lock} is not held`).toBe(false);
  expect(d.latestToken, 'no token was ever granted on it').toBe('0');
  for (const [id, r] of k.raw) {
    const g = await r.call('KV', 'Get', { key: plant.key, staleOk: true });
    expect(g.found, `${id}: forged key ${plant.key} was not written`).toBe(false);
  }
}

// ---- the channels an attack is tried on ---------------------------------------------------------------------

export type Channel = 'client-port' | 'no-cert' | 'client-cert' | 'other-ca' | 'member-spoof' | 'wrong-cluster-id' | 'member-own';
/** The channels of an outsider or an impostor (member-own, a member speaking for itself, is not one of them). */
export const CHANNELS: Channel[] = ['client-port', 'no-cert', 'client-cert', 'other-ca', 'member-spoof', 'wrong-cluster-id'];

/** Lines of the node's log (cluster.log, prefixed "[id] ") that contain `text`. */
export function logCount(k: AttackCluster, id: NodeId, text: string): number {
  let log = '';
  try {
    log = readFileSync(path.join(k.cluster.dir, 'cluster.log'), 'utf8');
  } catch {
    return 0;
  }
  return log.split('\n').filter((l) => l.startsWith(`[${id}] `) && l.includes(text)).length;
}

/** The member whose certificate an impostor uses: neither the target nor the member it claims to be. */
export function impostorFor(k: AttackCluster, target: NodeId, claimed: NodeId): NodeId {
  const m = k.ids.find((id) => id !== target && id !== claimed);
  if (!m) throw new Error(`no third member besides ${target} and ${claimed}`);
  return m;
}

/**
 * Sends `batches` (messages from `claimed` to `target`) over one channel, in the cluster's carrier, and
 * checks that it was refused the way that channel must refuse it.
 */
export async function sendOn(k: AttackCluster, channel: Channel, target: NodeId, claimed: NodeId, batches: Message[][], gapMs?: number): Promise<PeerStreamResult> {
  const node = k.cluster.node(target);
  const at = `${k.carrier} ${channel} -> ${target}`;
  const send = (address: string, creds: PeerCredentials, clusterId: string, alpn?: string[]): Promise<PeerStreamResult> =>
    sendForged(k.carrier, address, creds, clusterId, batches, { gapMs, claimedId: claimed, alpn });
  let r: PeerStreamResult;
  switch (channel) {
    case 'client-port':
      // A plain client (the client certificate) on the client listener. gRPC: RaftPeer does not exist there.
      // Frames: offered as HTTP/2 (else the listener waits out its unknown-protocol timeout), not a preface.
      r = await send(node.address, credentialsFrom(k.certsDir, 'client'), k.clusterId, ['h2']);
      expect(r.admitted, `${at}: ${r.details}`).toBe(false);
      expect(r.outcome, `${at}: ${r.details}`).toBe(k.carrier === 'grpc' ? 'unimplemented' : 'closed');
      return r;
    case 'no-cert':
      r = await send(node.peerAddress, credentialsFrom(k.certsDir, null), k.clusterId);
      expect(r.admitted, `${at}: the handshake is refused`).toBe(false);
      expect(r.outcome, `${at}: ${r.details}`).toBe('closed');
      return r;
    case 'client-cert':
      r = await send(node.peerAddress, credentialsFrom(k.certsDir, 'client'), k.clusterId);
      expect(r.admitted, `${at}: a client identity is not a node`).toBe(false);
      expect(r.outcome, `${at}: ${r.details}`).toBe('denied');
      return r;
    case 'other-ca': {
      // The claimed member's identity, signed by another CA; the attacker trusts the real CA to reach the node.
      const foreign = credentialsFrom(k.foreignCertsDir, claimed, `${claimed} of another CA`);
      r = await send(node.peerAddress, { ...foreign, ca: readFileSync(path.join(k.certsDir, 'ca.pem')) }, k.clusterId);
      expect(r.admitted, `${at}: a certificate of another CA is refused`).toBe(false);
      expect(r.outcome, `${at}: ${r.details}`).toBe('closed');
      return r;
    }
    case 'member-spoof': {
      // Another member's valid certificate, messages claiming to be from `claimed`: admitted, every message dropped.
      const impostor = impostorFor(k, target, claimed);
      const warningsBefore = logCount(k, target, SPOOF_WARNING);
      r = await send(node.peerAddress, credentialsFrom(k.certsDir, impostor), k.clusterId);
      expect(r.admitted, `${at}: ${impostor}'s certificate is a member's: the stream is admitted`).toBe(true);
      if (batches.some((b) => b.some((m) => m.term >= RAFT_NUMBER_LIMIT))) {
        // A term no node may adopt cannot even be decoded: the batch ends the stream before its sender is judged.
        expect(r.outcome, `${at}: ${r.details}`).toBe('malformed');
        expect(r.details).toMatch(/exceeds the limit 2\^48/);
        return r;
      }
      expect(r.outcome, `${at}: ${r.details}`).toBe('ended');
      await eventually(() => logCount(k, target, SPOOF_WARNING) > warningsBefore, 5_000, `${target} to log "${SPOOF_WARNING}"`);
      return r;
    }
    case 'wrong-cluster-id':
      // The claimed member's own certificate (same CA, `from` matches) but another cluster's id.
      r = await send(node.peerAddress, credentialsFrom(k.certsDir, claimed), FOREIGN_CLUSTER_ID);
      expect(r.admitted, `${at}: another cluster's id is refused`).toBe(false);
      expect(r.outcome, `${at}: ${r.details}`).toBe('denied');
      return r;
    case 'member-own':
      // A member speaking for itself: the transport admits it; only the Raft core can judge what it says.
      r = await send(node.peerAddress, credentialsFrom(k.certsDir, claimed), k.clusterId);
      expect(r.admitted, `${at}: ${claimed}'s own stream is admitted`).toBe(true);
      return r;
  }
}

/** sendOn over every channel in turn. */
export async function sendEverywhere(k: AttackCluster, target: NodeId, claimed: NodeId, build: () => Promise<Message[][]>, gapMs?: number): Promise<void> {
  for (const channel of CHANNELS) await sendOn(k, channel, target, claimed, await build(), gapMs);
}
