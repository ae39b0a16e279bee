// The peers the transport dials: the current members, and for a while those that just left. A member that
// is removed learns of it only from the leader (the entry that removes it, then its commit); cutting the
// link at once would leave it campaigning in vain instead of stopping.
import type { NodeId } from '../raft';
import type { TimerHandle, Timers } from './runtime/ports';

export class LingeringPeers {
  private current: Record<NodeId, string> = {};
  private readonly leaving = new Map<NodeId, { address: string; timer: TimerHandle }>();

  constructor(
    private readonly apply: (peers: Record<NodeId, string>) => void,
    private readonly lingerMs: number,
    private readonly timers: Pick<Timers, 'setTimeout' | 'clearTimeout'>,
  ) {}

  set(peers: Record<NodeId, string>): void {
    for (const [id, address] of Object.entries(this.current)) {
      if (peers[id] !== undefined || this.leaving.has(id)) continue;
      const timer = this.timers.setTimeout(() => {
        this.leaving.delete(id);
        this.push();
      }, this.lingerMs);
      this.leaving.set(id, { address, timer });
    }
    for (const id of Object.keys(peers)) {
      const gone = this.leaving.get(id);
      if (gone !== undefined) this.timers.clearTimeout(gone.timer);
      this.leaving.delete(id);
    }
    this.current = { ...peers };
    this.push();
  }

  /** Forgets the departed members at once, so that no timer outlives the node. */
  close(): void {
    for (const { timer } of this.leaving.values()) this.timers.clearTimeout(timer);
    this.leaving.clear();
  }

  private push(): void {
    const all: Record<NodeId, string> = {};
    for (const [id, { address }] of this.leaving) all[id] = address;
    this.apply({ ...all, ...this.current });
  }
}
