import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { Role } from '../../raft/types';
import type { RaftDriver } from '../raftDriver';
import { DISK_AND_NETWORK_SECONDS, SNAPSHOT_SECONDS } from './buckets';
import type { DriverMetrics } from './driverMetrics';

/** Why a proposal failed, as the node tells its caller (label values of fencelock_raft_proposals_failed_total). */
export type ProposalFailure = 'not_leader' | 'stopped' | 'outcome_unknown' | 'error';

/** Where a snapshot came from: taken here, or installed from the leader. */
export type SnapshotOrigin = 'local' | 'leader';

const ROLES = Object.values(Role);

/** What the Raft metrics read of a driver (RaftDriver). */
export interface MeasuredDriver extends Pick<RaftDriver<unknown>, 'core' | 'pendingProposalCount' | 'pendingReadCount'> {
  on(event: 'role', listener: (role: Role, leader: string) => void): unknown;
}

/**
 * The Raft metrics of one node. Positions (term, indexes, role) are read from the driver when scraped;
 * events (proposals, persists, appends, snapshots, leader changes) are counted as they happen.
 */
export class RaftMetrics implements DriverMetrics {
  private driver: MeasuredDriver | undefined;
  private lastLeader = '';
  private refusedSeen = 0;

  readonly leaderChanges: Counter;
  readonly proposals: Counter;
  readonly proposalsFailed: Counter<'reason'>;
  readonly persistSeconds: Histogram;
  readonly persistedEntries: Counter;
  readonly appendRoundTrip: Histogram<'peer'>;
  readonly snapshotSeconds: Histogram;
  readonly snapshotBytes: Gauge;
  readonly snapshots: Counter<'origin'>;

  constructor(registry: Registry) {
    const registers = [registry];
    // collect() runs with the metric as `this`: the driver is reached through these closures.
    const driver = (): MeasuredDriver | undefined => this.driver;
    const status = (): ReturnType<MeasuredDriver['core']['status']> | undefined => this.driver?.core.status();
    const newlyRefused = (total: number): number => {
      const fresh = Math.max(0, total - this.refusedSeen);
      this.refusedSeen = Math.max(total, this.refusedSeen);
      return fresh;
    };
    const position = (name: string, help: string, read: (st: NonNullable<ReturnType<typeof status>>) => number): void => {
      new Gauge({ name, help, registers, collect() { const st = status(); if (st) this.set(read(st)); } });
    };
    position('fencelock_raft_term', 'Current Raft term of this node.', (st) => st.term);
    position('fencelock_raft_commit_index', 'Highest log index this node knows to be committed.', (st) => st.commit);
    position('fencelock_raft_applied_index', 'Highest log index applied to this node\'s state machine.', (st) => st.applied);
    position('fencelock_raft_last_index', 'Index of the last entry in this node\'s log.', (st) => st.lastIndex);
    position('fencelock_raft_snapshot_index', 'Index the log is compacted up to (the latest snapshot).', (st) => st.snapshotIndex);
    position('fencelock_raft_has_leader', '1 when this node knows a leader of its term, else 0.', (st) => (st.leader ? 1 : 0));
    new Gauge({
      name: 'fencelock_raft_role', help: 'Raft role of this node: 1 for the current role, 0 for the others.', labelNames: ['role'], registers,
      collect() { const st = status(); if (st) for (const r of ROLES) this.set({ role: r }, r === st.role ? 1 : 0); },
    });
    new Gauge({
      name: 'fencelock_raft_peer_match_index', help: 'On the leader: the highest log index known replicated on each peer.', labelNames: ['peer'], registers,
      collect() {
        this.reset();
        const st = status();
        for (const [peer, pr] of Object.entries(st?.progress ?? {})) if (peer !== st?.id) this.set({ peer }, pr.match);
      },
    });
    new Gauge({ name: 'fencelock_raft_pending_proposals', help: 'Proposals made on this node and not yet applied.', registers,
      collect() { const d = driver(); if (d) this.set(d.pendingProposalCount()); } });
    new Gauge({ name: 'fencelock_raft_pending_read_indexes', help: 'Linearizable reads waiting for leadership confirmation or for their index to apply.', registers,
      collect() { const d = driver(); if (d) this.set(d.pendingReadCount()); } });
    new Counter({
      name: 'fencelock_raft_refused_messages_total', help: 'Peer messages the Raft core dropped because they contradict the protocol.', registers,
      collect() {
        const fresh = newlyRefused(status()?.refusedMessages ?? 0);
        if (fresh > 0) this.inc(fresh);
      },
    });
    this.leaderChanges = new Counter({ name: 'fencelock_raft_leader_changes_total', help: 'Times this node saw a new leader.', registers });
    this.proposals = new Counter({ name: 'fencelock_raft_proposals_total', help: 'Entries this node proposed as leader.', registers });
    this.proposalsFailed = new Counter({ name: 'fencelock_raft_proposals_failed_total', help: 'Proposals that failed, by why.', labelNames: ['reason'], registers });
    this.persistSeconds = new Histogram({ name: 'fencelock_raft_persist_duration_seconds', help: 'Time to write and fsync one Raft batch (hard state, entries, snapshot).', buckets: DISK_AND_NETWORK_SECONDS, registers });
    this.persistedEntries = new Counter({ name: 'fencelock_raft_persisted_entries_total', help: 'Log entries written to stable storage.', registers });
    this.appendRoundTrip = new Histogram({ name: 'fencelock_raft_append_rtt_seconds', help: 'On the leader: from sending AppendEntries to a peer to its acknowledgement.', labelNames: ['peer'], buckets: DISK_AND_NETWORK_SECONDS, registers });
    this.snapshotSeconds = new Histogram({ name: 'fencelock_raft_snapshot_duration_seconds', help: 'Time to capture, encode and store a local snapshot.', buckets: SNAPSHOT_SECONDS, registers });
    this.snapshotBytes = new Gauge({ name: 'fencelock_raft_snapshot_size_bytes', help: 'Size of the latest snapshot taken or installed.', registers });
    this.snapshots = new Counter({ name: 'fencelock_raft_snapshots_total', help: 'Snapshots taken here (origin local) or installed from the leader (origin leader).', labelNames: ['origin'], registers });
  }

  /** Reads positions from this driver from now on, and counts its leader changes. */
  watch(driver: MeasuredDriver): void {
    this.driver = driver;
    this.refusedSeen = 0;
    driver.on('role', (_role: Role, leader: string) => {
      // An election in progress (no leader) is not a change; a new leader after it is, the same one is not.
      if (!leader || leader === this.lastLeader) return;
      this.leaderChanges.inc();
      this.lastLeader = leader;
    });
  }

  proposed(): void {
    this.proposals.inc();
  }

  proposalFailed(reason: ProposalFailure): void {
    this.proposalsFailed.inc({ reason });
  }

  persisted(seconds: number, entries: number): void {
    this.persistSeconds.observe(seconds);
    if (entries > 0) this.persistedEntries.inc(entries);
  }

  snapshotStored(origin: SnapshotOrigin, bytes: number): void {
    this.snapshots.inc({ origin });
    this.snapshotBytes.set(bytes);
  }

  snapshotTaken(seconds: number, bytes: number): void {
    this.snapshotSeconds.observe(seconds);
    this.snapshotStored('local', bytes);
  }
}
