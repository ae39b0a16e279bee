// What a nemesis may do to a cluster, whatever runs its nodes: the process cluster (test/integration/harness.ts:
// signals and a TCP proxy per peer link) and the container cluster (test/chaos/containerCluster.ts: Docker and
// iptables) both implement it, so fault code is written once against these seven verbs: start, stop, kill,
// pause, resume, cut, heal. A method may answer at once (a signal) or later (a Docker call): callers await either.
// Links are cut and healed in batches, a fault's links in one call: the container cluster rewrites every node's
// iptables rules once per call.

/** A directed peer link: what `from` sends to `to`. */
export interface Link {
  from: string;
  to: string;
}

export interface CutOptions {
  /**
   * What happens to established connections: 'freeze' holds them silently (a real partition), 'reset'
   * closes them. Only the process cluster's proxies tell the two apart; iptables drops always freeze.
   */
  existing?: 'freeze' | 'reset';
}

export interface ClusterControl {
  /** The node ids, in order. */
  readonly ids: readonly string[];
  /** Starts a node that is down, on its data and at its address. */
  start(id: string): void | Promise<void>;
  /** Graceful shutdown (SIGTERM: leadership transfer, flush); resolves once the node is down. */
  stop(id: string): Promise<void>;
  /** SIGKILL: the node dies at once with whatever it had not synced; resolves once it is down. */
  kill(id: string): Promise<void>;
  /** Freezes the node (SIGSTOP or a cgroup freeze), like a long GC pause. */
  pause(id: string): void | Promise<void>;
  resume(id: string): void | Promise<void>;
  /** Drops what each link's `from` sends to its `to` until healed (adds to the current cuts). */
  cut(links: readonly Link[], opts?: CutOptions): void | Promise<void>;
  /** Heals the links named (an empty list heals nothing), or every network fault when none are named. */
  heal(links?: readonly Link[]): void | Promise<void>;
}
