// Part 3 of the scale benchmark: how long a restarted follower takes to catch up when the leader has
// compacted past its log, so it must receive and install the leader's snapshot.
//
// Three RaftDrivers in this process, each with the node's real parts: LockApp, LevelStorage (fsync on every
// batch), GrpcPeerTransport over loopback, the Raft knobs of the node's defaults. One follower is stopped
// right after the election; the load (OpenSession and Acquire entries, through the leader's propose) then
// commits on the other two, which compact every `snapshotEvery` entries; the stopped follower restarts
// (a new driver over its own storage, as a restarted process would) and we time until it has applied
// everything the leader had committed.
//
// In one process the three nodes share one event loop (and the 2 cores with LevelDB's threads), so the
// leader's sending and the follower's installing do not overlap as they would in separate processes: the
// figure is an upper bound for this machine. A node encodes its snapshots a slice at a time between turns of
// its loop: the longest slice is how long one blocks the loop (compare it with the election timeout).
import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { encodeCommand } from '../../src/codec/commandCodec';
import { CONFIG_DEFAULTS } from '../../src/node/config';
import { LockApp } from '../../src/node/lockApp';
import type { SnapshotJob } from '../../src/node/replicatedApp';
import { createLogger } from '../../src/node/logger';
import { realPorts } from '../../src/node/runtime/realPorts';
import { RaftDriver } from '../../src/node/raftDriver';
import { RAFT_DEFAULTS } from '../../src/raft/config';
import { Role, type PersistedState } from '../../src/raft/types';
import { MAX_LOCKS, MAX_SESSIONS, type CommandResult } from '../../src/state';
import { LevelStorage } from '../../src/storage/levelStorage';
import type { PersistBatch, RaftStorage } from '../../src/storage/types';
import { GrpcPeerTransport, PEER_SERVER_OPTIONS } from '../../src/transport/grpcPeerTransport';
import { freePort, sleep } from './processes';
import { bytesEqual, check, mib, ms, round, workload } from './scaleCommon';

export interface CatchupOptions {
  locks: number;
  locksPerSession: number;
  snapshotEvery: number;
  /** Each node dials its peers once it listens, as the server does (false: the A/B baseline without it). */
  connectAll: boolean;
  log: (line: string) => void;
}

interface Timing {
  bytes: number;
  ms: number;
  /** performance.now() when it started. */
  at: number;
}

/** LockApp that records how long its snapshots (capture and slices) and restores take. */
class MeasuredLockApp extends LockApp {
  readonly snapshots: Timing[] = [];
  readonly restores: Timing[] = [];

  override captureSnapshot(): SnapshotJob {
    const at = performance.now();
    const job = super.captureSnapshot();
    // ms: the longest slice (capture included), the longest the loop was blocked for this snapshot.
    const timing: Timing = { bytes: 0, ms: performance.now() - at, at };
    this.snapshots.push(timing);
    return {
      step: () => {
        const started = performance.now();
        const done = job.step();
        timing.ms = Math.max(timing.ms, performance.now() - started);
        if (done) timing.bytes = job.bytes().byteLength;
        return done;
      },
      bytes: () => job.bytes(),
      cancel: () => job.cancel(),
    };
  }

  override restore(data: Uint8Array): void {
    const at = performance.now();
    super.restore(data);
    this.restores.push({ bytes: data.byteLength, ms: performance.now() - at, at });
  }
}

/** LevelStorage with the time of each persisted snapshot (a received snapshot is written before it is installed). */
class MeasuredStorage implements RaftStorage {
  readonly snapshotWrites: Timing[] = [];

  constructor(readonly inner: LevelStorage) {}

  load(): Promise<PersistedState> {
    return this.inner.load();
  }

  async persist(batch: PersistBatch): Promise<void> {
    if (batch.snapshot === undefined) return this.inner.persist(batch);
    const at = performance.now();
    await this.inner.persist(batch);
    this.snapshotWrites.push({ bytes: batch.snapshot.data.byteLength, ms: performance.now() - at, at });
  }

  saveSnapshot(snapshot: Parameters<RaftStorage['saveSnapshot']>[0]): Promise<void> {
    return this.inner.saveSnapshot(snapshot);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

interface Node {
  id: string;
  server: grpc.Server;
  transport: GrpcPeerTransport;
  storage: MeasuredStorage;
  app: MeasuredLockApp;
  driver: RaftDriver<CommandResult>;
}

const IDS = ['n1', 'n2', 'n3'];

async function until(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > deadline) throw new Error(`bench-scale: timed out waiting for ${what}`);
    await sleep(2);
  }
}

export async function runCatchupBench(opts: CatchupOptions): Promise<Record<string, unknown>> {
  const { locksPerSession, snapshotEvery, log } = opts;
  const sessions = Math.ceil(opts.locks / locksPerSession);
  const locks = sessions * locksPerSession;
  // Real nodes with their real limits here (part 1 raises them only for itself and restores them).
  check(locks <= MAX_LOCKS && sessions <= MAX_SESSIONS, `--catchup-locks beyond the node's limits (MAX_LOCKS ${MAX_LOCKS}, MAX_SESSIONS ${MAX_SESSIONS})`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-scale-catchup-'));
  const ports = await Promise.all(IDS.map(() => freePort()));
  const members = Object.fromEntries(IDS.map((id, i) => [id, `127.0.0.1:${ports[i]}`]));
  // 'error': the leader's warnings about the stopped follower's broken stream are expected here.
  const logger = createLogger('bench-scale', 'error');
  const roleChanges: Array<{ node: string; role: Role; leader: string; term: number; at: number }> = [];
  const t0 = performance.now();

  async function startNode(id: string): Promise<Node> {
    const server = new grpc.Server(PEER_SERVER_OPTIONS);
    const transport = new GrpcPeerTransport({ selfId: id, peers: members, logger: logger.child({ node: id, part: 'transport' }) });
    transport.register(server);
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(members[id], grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
    );
    // As the server does once it listens: a leader backing off from a restarted node redials it at once.
    if (opts.connectAll) transport.connectAll();
    const storage = new MeasuredStorage(await LevelStorage.open(path.join(dir, id)));
    const app = new MeasuredLockApp();
    const driver = await RaftDriver.start<CommandResult>({
      raft: {
        id,
        voters: IDS,
        electionTicks: CONFIG_DEFAULTS.electionTicks,
        heartbeatTicks: CONFIG_DEFAULTS.heartbeatTicks,
        random: Math.random,
        ...RAFT_DEFAULTS,
      },
      storage,
      transport,
      app,
      tickMs: CONFIG_DEFAULTS.tickMs,
      snapshotEveryEntries: snapshotEvery,
      logger: logger.child({ node: id }),
      ports: realPorts(),
    });
    driver.on('role', (role: Role, leader: string, term: number) =>
      roleChanges.push({ node: id, role, leader, term, at: round((performance.now() - t0) / 1000, 3) }),
    );
    return { id, server, transport, storage, app, driver };
  }

  async function stopNode(n: Node): Promise<void> {
    await n.driver.stop(0);
    await n.transport.close();
    n.server.forceShutdown();
    await n.storage.close();
  }

  const nodes: Node[] = [];
  try {
    for (const id of IDS) nodes.push(await startNode(id));
    await until(() => nodes.some((n) => n.driver.isLeader()), 10_000, 'a leader');
    const leader = nodes.find((n) => n.driver.isLeader())!;
    const lagging = nodes.find((n) => n !== leader)!;
    const laggingLastIndex = lagging.driver.core.status().lastIndex;
    await stopNode(lagging);
    nodes.splice(nodes.indexOf(lagging), 1);
    log(`  leader ${leader.id}; follower ${lagging.id} stopped at log index ${laggingLastIndex}`);

    // Load through Raft with a window of proposals in flight, so that group commit batches them.
    const total = sessions + locks;
    const window = 2_000;
    let proposed = 0;
    let inFlight = 0;
    let failure: Error | undefined;
    const commands = workload('per-session', sessions, locksPerSession, Date.now());
    const loadStart = performance.now();
    await new Promise<void>((resolve) => {
      const pump = (): void => {
        while (inFlight < window && proposed < total && failure === undefined) {
          const next = commands.next();
          check(!next.done, 'workload ended early');
          const command = next.value;
          proposed++;
          inFlight++;
          leader.driver.propose(encodeCommand(command)).then(
            ({ result }) => {
              const ok = command.type === 'OpenSession' ? result.result.status === 'session_opened' : result.result.status === 'granted';
              if (!ok) failure ??= new Error(`${command.type} answered ${JSON.stringify(result.result)}`);
            },
            (err: Error) => (failure ??= err),
          ).finally(() => {
            inFlight--;
            if ((proposed === total || failure !== undefined) && inFlight === 0) resolve();
            else pump();
          });
        }
      };
      pump();
    });
    if (failure !== undefined) throw failure;
    const loadMs = performance.now() - loadStart;
    const st = leader.driver.core.status();
    const target = st.commit;
    log(
      `  loaded ${sessions} sessions + ${locks} locks = ${total} entries through Raft in ${ms(loadMs)} ` +
        `(${Math.round(total / (loadMs / 1000))} entries/s, window ${window}, fsync on)`,
    );
    const leaderSnaps = leader.app.snapshots;
    const lastSnap = leaderSnaps[leaderSnaps.length - 1];
    log(
      `  leader: commit ${target}, snapshot at ${st.snapshotIndex} (${st.lastIndex - st.snapshotIndex} entries after it); ` +
        `${leaderSnaps.length} snapshots taken during the load, longest slice of encoding ${ms(Math.max(0, ...leaderSnaps.map((s) => s.ms)))}, ` +
        `last ${lastSnap ? mib(lastSnap.bytes) : '-'}`,
    );
    check(
      st.snapshotIndex > laggingLastIndex,
      `the leader has not compacted past the stopped follower (snapshot index ${st.snapshotIndex}): load more or lower --catchup-snapshot-every`,
    );
    const loadRoleChanges = roleChanges.filter((r) => r.role === Role.Leader && r.node !== leader.id).length;
    const heldOnLeader = leader.app.machine.stats().heldLocks;
    check(heldOnLeader === locks, `leader holds ${heldOnLeader} locks, expected ${locks}`);

    // Restart the stopped follower over its own storage, as a restarted process would.
    const restartAt = performance.now();
    const restarted = await startNode(lagging.id);
    nodes.push(restarted);
    const startedAt = performance.now();
    // Milestones seen from the leader: its stream to the follower is back, it starts sending the snapshot.
    let linkUpAt = 0;
    let sendingAt = 0;
    await until(
      () => {
        if (linkUpAt === 0 && leader.transport.stats()[restarted.id]?.connected) linkUpAt = performance.now();
        if (sendingAt === 0 && leader.driver.core.status().progress[restarted.id]?.state === 'snapshot') sendingAt = performance.now();
        return restarted.driver.core.status().applied >= target;
      },
      600_000,
      'the restarted follower to catch up',
    );
    const doneAt = performance.now();
    const catchupMs = doneAt - restartAt;
    const restore = restarted.app.restores[restarted.app.restores.length - 1];
    const write = restarted.storage.snapshotWrites[restarted.storage.snapshotWrites.length - 1];
    check(restore !== undefined && write !== undefined, 'the restarted follower caught up without installing a snapshot');
    const rel = (t: number): number => round(t - restartAt);
    log(`  follower ${restarted.id} restarted: applied ${target} after ${ms(catchupMs)}`);
    log(
      `    open storage + load + start driver ${ms(startedAt - restartAt)}; leader's link up at +${ms(rel(linkUpAt))}, ` +
        `sending the snapshot from +${ms(rel(sendingAt))}; snapshot (${mib(restore.bytes)}) received and persisted at ` +
        `+${ms(rel(write.at + write.ms))} (write ${ms(write.ms)}); installed (readSnapshot) from +${ms(rel(restore.at))} ` +
        `taking ${ms(restore.ms)}; the ${target - st.snapshotIndex} entries after it applied by +${ms(rel(doneAt))}`,
    );

    // Same state on both: the canonical snapshots are byte-identical.
    await until(() => leader.driver.core.status().applied >= target, 10_000, 'the leader to apply');
    const a = leader.app.machine.writeSnapshot();
    const b = restarted.app.machine.writeSnapshot();
    check(bytesEqual(a, b), 'the restarted follower differs from the leader');
    const churn = roleChanges.filter((r) => r.role === Role.Leader).length - 1;
    log(`  restarted follower's state is byte-identical to the leader's (${restarted.app.machine.stats().heldLocks} locks held); leader changes: ${churn}`);

    return {
      sessions,
      locks,
      entries: total,
      snapshotEveryEntries: snapshotEvery,
      load: { ms: round(loadMs), entriesPerSec: Math.round(total / (loadMs / 1000)), window, leaderChangesDuringLoad: loadRoleChanges },
      leader: {
        commit: target,
        snapshotIndex: st.snapshotIndex,
        entriesAfterSnapshot: st.lastIndex - st.snapshotIndex,
        snapshotsDuringLoad: leaderSnaps.map((s) => ({ bytes: s.bytes, longestSliceMs: round(s.ms) })),
      },
      follower: { stoppedAtIndex: laggingLastIndex },
      catchup: {
        totalMs: round(catchupMs),
        startMs: round(startedAt - restartAt),
        leaderLinkUpAtMs: rel(linkUpAt),
        leaderSendingAtMs: rel(sendingAt),
        snapshotBytes: restore.bytes,
        snapshotPersistedAtMs: rel(write.at + write.ms),
        snapshotPersistMs: round(write.ms),
        installStartedAtMs: rel(restore.at),
        installMs: round(restore.ms),
        entriesAfterSnapshot: target - st.snapshotIndex,
      },
      leaderChanges: churn,
      roleChanges,
      equal: true,
    };
  } finally {
    for (const n of nodes) await stopNode(n).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
