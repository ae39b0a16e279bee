// What the runner sees of the cluster: each node's own Cluster.Status (short deadlines; only nodes that run
// and are not frozen are asked, so a paused node costs no timeout), and from those the leader.
import { FenceLockClient, type NodeStatus } from '../../../src/client';
import type { LocalCluster } from '../harness';

export class ClusterView {
  readonly ids: string[];
  private readonly client: FenceLockClient;

  /** `ids`: the members (default every node of the cluster); admit() and retire() follow membership changes. */
  constructor(
    private readonly cluster: LocalCluster,
    ids: string[] = cluster.ids,
  ) {
    this.ids = [...ids];
    this.client = new FenceLockClient({ endpoints: cluster.endpoints, requestTimeoutMs: 400, totalTimeoutMs: 1_500 });
  }

  /** A node joined the configuration: the view waits for it too (in place: the run's context shares `ids`). */
  admit(id: string): void {
    if (!this.ids.includes(id)) this.ids.push(id);
  }

  /** A node left the configuration: no longer asked for, and never restarted by healAll. */
  retire(id: string): void {
    const i = this.ids.indexOf(id);
    if (i >= 0) this.ids.splice(i, 1);
  }

  /** The node's process runs and is not paused. */
  up(id: string): boolean {
    return this.cluster.isRunning(id) && !this.cluster.node(id).paused;
  }

  /** One node's status, asked directly (no check that it is up). */
  status(id: string): Promise<NodeStatus> {
    return this.client.status(this.cluster.node(id).address);
  }

  /** Statuses of the nodes of `among` that are up and answer. */
  async statuses(among: string[] = this.ids): Promise<Map<string, NodeStatus>> {
    const out = new Map<string, NodeStatus>();
    await Promise.all(
      among
        .filter((id) => this.up(id))
        .map(async (id) => {
          try {
            out.set(id, await this.status(id));
          } catch {
            /* unreachable right now */
          }
        }),
    );
    return out;
  }

  /** The leader with the highest term among the nodes that answer (undefined when none says leader). */
  async leaderNow(among: string[] = this.ids): Promise<NodeStatus | undefined> {
    let best: NodeStatus | undefined;
    for (const s of (await this.statuses(among)).values()) if (s.role === 'leader' && (!best || s.term > best.term)) best = s;
    return best;
  }

  /** The leader every node answers with (same id, same term); undefined while any node disagrees or is silent. */
  async agreedLeader(): Promise<NodeStatus | undefined> {
    const st = await this.statuses();
    if (st.size !== this.ids.length) return undefined;
    const leaders = [...st.values()].filter((s) => s.role === 'leader');
    if (leaders.length !== 1) return undefined;
    return [...st.values()].every((s) => s.leader === leaders[0]!.id && s.term === leaders[0]!.term) ? leaders[0] : undefined;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
