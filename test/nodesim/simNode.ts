import pino from 'pino';
import { CONFIG_DEFAULTS, deriveClusterId, type NodeConfig } from '../../src/node/config';
import type { Logger } from '../../src/node/logger';
import { fullConfig, type FullConfig } from '../../src/raft/confChange';
import type { PersistedState } from '../../src/raft/types';
import { NodeRuntime, type RuntimeOptions } from '../../src/node/runtime/nodeRuntime';
import { MemoryCarrier, type MemoryWire } from '../../src/transport/memoryCarrier';
import { PeerPolicy } from '../../src/transport/peerPolicy';
import { Prng } from '../support/prng';
import type { RaftObserver } from './raftObserver';
import { SimDisk } from './simDisk';
import { seededRandom, type Actor } from './world';

/** The address clients and leader hints use for a simulated node. */
export const addressOf = (id: string): string => `${id}.sim:7000`;

/**
 * The configuration every simulated node runs with: the shipped defaults, smaller snapshots. A node that
 * joins a running cluster (`join`) is given the cluster's id and its voters besides itself.
 */
export function simConfig(id: string, ids: readonly string[], snapshotEveryEntries: number, join?: { clusterId: string }): NodeConfig {
  const members = Object.fromEntries(ids.map((m) => [m, { client: addressOf(m), peer: `${m}.sim:7100` }]));
  return {
    ...CONFIG_DEFAULTS,
    id,
    listen: addressOf(id),
    peerListen: `${id}.sim:7100`,
    members,
    join: join !== undefined,
    clusterId: join?.clusterId ?? deriveClusterId(members),
    clientCertAuth: false,
    insecure: true,
    dataDir: `/sim/${id}`,
    auth: { enabled: false },
    snapshotEveryEntries,
  };
}

/**
 * One simulated node: an Actor (its clocks, timers, stalls), a disk that outlives crashes, and the current
 * incarnation of the real NodeRuntime, started from that disk.
 */
export class SimNode {
  readonly disk = new SimDisk();
  runtime: NodeRuntime | undefined;
  /** The shipped peer policy over the memory carrier, as the server runs it over TLS. */
  transport: PeerPolicy | undefined;
  /** Where the network delivers dials and frames for the current incarnation (set while it starts). */
  carrier: MemoryCarrier | undefined;
  /** Feeds the Raft checker what the current incarnation does. */
  observer: RaftObserver | undefined;
  /** Set when the runtime stopped on its own (a storage or apply failure): always a defect here. */
  fatal: Error | undefined;
  starting = false;
  /** Removed from the cluster (and stopped, or never to be restarted): no fault touches it again. */
  retired = false;

  constructor(
    readonly id: string,
    readonly actor: Actor,
    readonly config: NodeConfig,
    private readonly random: Prng,
    private readonly fsyncMs: () => number,
    private readonly wire: MemoryWire,
    private readonly logger: Logger,
    private readonly extras: Pick<RuntimeOptions, 'plantedBugs' | 'raftTuning' | 'snapshotSliceUnits'> = {},
    /** The transport's backoff jitter: a stream of its own, so that the node's election jitter does not move. */
    private readonly transportRandom: Prng = Prng.derive(0, `transport-${id}`),
  ) {}

  get up(): boolean {
    return this.runtime !== undefined;
  }

  /** The configuration of an empty data folder, as the sim gave it (for the Raft checker). */
  get bootstrap(): FullConfig {
    const others = Object.keys(this.config.members).filter((m) => !this.config.join || m !== this.id);
    return fullConfig({ voters: others, learners: this.config.join ? [this.id] : [] });
  }

  /**
   * Starts a new incarnation from what the disk holds (a restart after a crash, or the first start), watched
   * by the observer `observe` makes for it.
   */
  async start(onStarted: (runtime: NodeRuntime) => void, observe: (loaded: PersistedState) => RaftObserver): Promise<void> {
    this.starting = true;
    const incarnation = this.actor.incarnation;
    const loaded = this.disk.storage.loadSync();
    const observer = observe(loaded);
    const carrier = new MemoryCarrier(this.id, this.wire);
    this.carrier = carrier;
    const peers = Object.fromEntries(Object.entries(this.config.members).map(([id, m]) => [id, m.peer]));
    const transport = new PeerPolicy({
      selfId: this.id,
      peers,
      clusterId: this.config.clusterId,
      selfAddress: this.config.members[this.id]?.peer,
      logger: this.logger.child({ part: 'transport' }),
      ports: this.actor.ports(seededRandom(this.transportRandom)),
    }, carrier);
    const runtime = await NodeRuntime.start({
      config: this.config,
      storage: this.disk.forIncarnation(this.actor, this.fsyncMs, (batch) => observer.onWrite(batch)),
      transport,
      ports: this.actor.ports(seededRandom(this.random)),
      logger: this.logger,
      ...this.extras,
    });
    if (incarnation !== this.actor.incarnation) return; // crashed while starting
    // Listening now: the server dials every peer at this point, naming itself to them (peerPolicy.connectAll).
    transport.connectAll();
    this.starting = false;
    observer.attach(runtime, transport, loaded);
    this.observer = observer;
    this.runtime = runtime;
    this.transport = transport;
    runtime.driver.on('fatal', (err: Error) => (this.fatal ??= err));
    onStarted(runtime);
  }

  /** A graceful stop, as the server stops once it applied its own removal; the node never starts again. */
  async retire(): Promise<void> {
    this.retired = true;
    const runtime = this.runtime;
    if (runtime) await runtime.stop();
    this.crash(this.disk.storage.unsyncedBatches);
  }

  /** Power loss: the process is gone, un-synced writes beyond `keep` batches are lost. Returns batches lost. */
  crash(keep: number): number {
    this.actor.restartIncarnation();
    this.runtime = undefined;
    this.transport = undefined;
    this.carrier?.stop();
    this.carrier = undefined;
    this.observer = undefined;
    this.starting = false;
    return this.disk.crash(keep);
  }
}

/** A logger that writes the node's own lines into the timeline (or nowhere). */
export function nodeLogger(id: string, line: ((text: string) => void) | undefined): Logger {
  if (!line) return pino({ level: 'silent' });
  return pino(
    { level: 'info', base: { node: id }, timestamp: false },
    { write: (s: string) => line(s.trimEnd()) },
  ) as unknown as Logger;
}
