import { RAFT_DEFAULTS, type RaftConfig } from '../../raft/config';
import type { CommandResult, LeaseCommand } from '../../state';
import type { RaftStorage } from '../../storage/types';
import { clusterService } from '../api/clusterService';
import { NodeContext } from '../api/context';
import { kvService } from '../api/kvService';
import { semaphoreService } from '../api/semaphoreService';
import { lockService } from '../api/lockService';
import { sessionService } from '../api/sessionService';
import { authService } from '../api/authService';
import { AuthBootstrap } from './authBootstrap';
import type { NodeConfig } from '../config';
import { LingeringPeers } from '../lingeringPeers';
import { LockApp } from '../lockApp';
import { MemberDirectory } from '../members';
import type { Logger } from '../logger';
import { RaftDriver, type DriverBugs, type PeerTransport } from '../raftDriver';
import { AppendTimer } from '../metrics/appendTimer';
import { measuredStorage } from '../metrics/measuredStorage';
import { NodeMetrics } from '../metrics/nodeMetrics';
import { LeaderDuties, type LeaseBugs } from './leaderDuties';
import type { NodePorts } from './ports';

/**
 * The configuration a node with an empty log starts from. A node that joins a running cluster (`join`) is a
 * learner that knows the members in its file as voters, until the log it receives says otherwise.
 */
function bootstrapConfig(config: NodeConfig): Pick<RaftConfig, 'voters' | 'learners' | 'addresses'> {
  const ids = Object.keys(config.members).sort();
  const addresses = Object.fromEntries(Object.entries(config.members).map(([id, m]) => [id, { client: m.client, peer: m.peer }]));
  if (!config.join) return { voters: ids, learners: [], addresses };
  return { voters: ids.filter((id) => id !== config.id), learners: [config.id], addresses };
}

/**
 * Fixed defects (and broken Raft rules) the simulator can plant again, one at a time, to show it catches
 * each. Never set elsewhere.
 */
export type PlantedBugs = DriverBugs & LeaseBugs;

/** A member that left is still reached this many election timeouts: long enough to learn of its removal. */
const MEMBER_LINGER_ELECTIONS = 10;

export interface RuntimeOptions {
  config: NodeConfig;
  storage: RaftStorage;
  transport: PeerTransport;
  ports: NodePorts;
  logger: Logger;
  plantedBugs?: PlantedBugs;
  /** Replication settings the simulator varies (one entry per append, no pipelining); defaults otherwise. */
  raftTuning?: Partial<Pick<RaftConfig, 'maxMsgBytes' | 'maxInflight'>>;
  /** Work per slice of snapshot encoding; the simulator makes it tiny, so encodings span many turns. */
  snapshotSliceUnits?: number;
  /** The node's metrics (the server's include the process's); default: a registry of this node's own. */
  metrics?: NodeMetrics;
}

/**
 * One whole fencelock node with no timers, sockets, disk or clock of its own: the Ready loop (RaftDriver),
 * the lock state machine, the leader's duties (leases, expiries) and the API's answers (the services'
 * handlers, whose ApiErrors carry the gRPC status a call gets). The server wraps it in real timers, gRPC
 * and LevelDB (realPorts); the simulator (test/nodesim) wraps the same object in virtual time, memory
 * storage and a simulated network, so what runs under seeded faults is what ships.
 */
export class NodeRuntime {
  private constructor(
    readonly driver: RaftDriver<CommandResult>,
    readonly app: LockApp,
    readonly duties: LeaderDuties,
    readonly context: NodeContext,
    readonly metrics: NodeMetrics,
    readonly services: {
      session: ReturnType<typeof sessionService>;
      lock: ReturnType<typeof lockService>;
      semaphore: ReturnType<typeof semaphoreService>;
      kv: ReturnType<typeof kvService>;
      cluster: ReturnType<typeof clusterService>;
      auth: ReturnType<typeof authService>;
    },
    private readonly authBootstrap: AuthBootstrap,
    private readonly dialled: LingeringPeers,
  ) {}

  static async start(opts: RuntimeOptions): Promise<NodeRuntime> {
    const { config, ports, logger } = opts;
    const app = new LockApp(opts.snapshotSliceUnits);
    const now = (): number => ports.clock.monotonicMs();
    const metrics = opts.metrics ?? new NodeMetrics(config.id, now, false, config.metricsLockLabelDepth);
    const driver = await RaftDriver.start<CommandResult>({
      raft: {
        // The defaults first: they hold empty learners and addresses, which must not replace the bootstrap's.
        ...RAFT_DEFAULTS,
        id: config.id,
        ...bootstrapConfig(config),
        electionTicks: config.electionTicks,
        heartbeatTicks: config.heartbeatTicks,
        random: () => ports.random.fraction(),
        lazyCommitNotice: true,
        ...opts.raftTuning,
      },
      storage: measuredStorage(opts.storage, metrics.raft, now),
      transport: new AppendTimer(opts.transport, metrics.raft, now),
      app,
      tickMs: config.tickMs,
      snapshotEveryEntries: config.snapshotEveryEntries,
      logger,
      ports,
      plantedBugs: opts.plantedBugs,
      metrics: metrics.raft,
    });
    metrics.watch(driver, app);
    // A node that the committed configuration removed is told so when it reaches this one (removalNotice.ts).
    opts.transport.answerRemovedMembers?.((id) => driver.removedByCommittedConfig(id));
    // The sweep only runs on a later timer, after the context exists.
    const proposeLeaseCommand = (command: LeaseCommand): Promise<unknown> => context.propose(command);
    const duties = new LeaderDuties(
      driver,
      app,
      ports,
      config.tickMs,
      proposeLeaseCommand,
      logger,
      opts.plantedBugs,
    );
    const members = new MemberDirectory(config, () => driver.config());
    // The members are the log's from here on (the file only bootstraps an empty data folder).
    const dialled = new LingeringPeers((p) => opts.transport.setPeers?.(p), MEMBER_LINGER_ELECTIONS * config.tickMs * config.electionTicks, ports.timers);
    const syncPeers = (): void => dialled.set(members.peerDialAddresses());
    syncPeers();
    driver.on('config', syncPeers);
    const context = new NodeContext(config, driver, app, duties, ports, logger, members, metrics);
    const services = {
      session: sessionService(context),
      lock: lockService(context),
      semaphore: semaphoreService(context),
      kv: kvService(context),
      cluster: clusterService(context),
      auth: authService(context),
    };
    const authBootstrap = new AuthBootstrap(config, driver, app, ports, (command) => context.propose(command), logger);
    authBootstrap.start();
    return new NodeRuntime(driver, app, duties, context, metrics, services, authBootstrap, dialled);
  }

  /** Graceful stop: timers cleared, leadership handed over, the batch in flight flushed. Storage stays open. */
  async stop(): Promise<void> {
    this.duties.stop();
    this.authBootstrap.stop();
    this.context.runStopHooks();
    await this.driver.stop();
    this.dialled.close();
  }
}
