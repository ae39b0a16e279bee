// Leader changes caused by node faults: which leader a fault hit, who took over and how fast, and whether the
// old leader stepped down. A measurement during another fault says little, so overlaps are marked.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClusterView } from './clusterView';
import type { FaultKind } from './schedule';

export interface Failover {
  kind: FaultKind;
  /** The leader the fault hit. */
  from: string;
  /** Offset of the fault on the run clock. */
  at: number;
  /** The first other leader seen (id), with a higher term; undefined when none within the hold (or 4 s). */
  to?: string;
  /** ms from the fault to that leader. */
  ms?: number;
  /** isolate-leader / one-way-leader: ms until the old leader no longer said it was leader. */
  stepDownMs?: number;
  /** Operations (of every client) that returned without success while the cluster had no leader. */
  failedOps?: number;
  /** Another node-lane fault was active when this one began, or began before a new leader was seen. */
  overlapped: boolean;
}

/** The failovers of a run, and which node faults are active now (to mark overlaps). */
export class FailoverWatch {
  readonly list: Failover[] = [];
  private readonly watching = new Set<Failover>();
  private active = 0;

  constructor(
    private readonly view: ClusterView,
    private readonly clock: () => number,
  ) {}

  /** A node fault begins: a failover still waiting for its new leader now overlaps it. */
  begin(): void {
    this.active++;
    for (const fo of this.watching) if (fo.to === undefined) fo.overlapped = true;
  }

  end(): void {
    this.active--;
  }

  /**
   * Records a failover away from `from` (leader at `term`) and measures it while the fault lasts and at
   * least 4 s (a short fault may heal before the others elect). `t0` is when the fault was decided.
   */
  async watch(kind: FaultKind, from: string, term: bigint, t0: number, healed: Promise<void>, stepDown: boolean): Promise<void> {
    const fo: Failover = { kind, from, at: this.clock(), overlapped: this.active > 1 };
    this.list.push(fo);
    this.watching.add(fo);
    let done = false;
    void Promise.all([healed, sleep(4_000)]).then(() => (done = true));
    const over = (): boolean => done;
    try {
      await Promise.all([this.newLeader(fo, term, t0, over), stepDown ? this.stepDown(fo, t0, over) : undefined]);
    } finally {
      this.watching.delete(fo);
    }
  }

  /** Fills `to` and `ms` with the first other node that says leader at a higher term. */
  private async newLeader(fo: Failover, oldTerm: bigint, t0: number, over: () => boolean): Promise<void> {
    const others = this.view.ids.filter((id) => id !== fo.from);
    while (!over()) {
      const l = await this.view.leaderNow(others).catch(() => undefined);
      if (l && l.term > oldTerm) {
        fo.to = l.id;
        fo.ms = Math.round(performance.now() - t0);
        return;
      }
      await sleep(25);
    }
  }

  /** Fills `stepDownMs` once the old leader no longer says it is leader. */
  private async stepDown(fo: Failover, t0: number, over: () => boolean): Promise<void> {
    while (!over()) {
      try {
        if ((await this.view.status(fo.from)).role !== 'leader') {
          fo.stepDownMs = Math.round(performance.now() - t0);
          return;
        }
      } catch {
        /* not answering */
      }
      await sleep(25);
    }
  }
}

/** One node fault from the moment its targets are chosen until it heals, and the failover it may cause. */
export class FaultHold {
  readonly t0 = performance.now();
  readonly healed: Promise<void>;
  private release: () => void = () => undefined;
  private measuring: Promise<void> = Promise.resolve();

  constructor(
    private readonly kind: FaultKind,
    private readonly failovers: FailoverWatch,
  ) {
    this.healed = new Promise<void>((r) => (this.release = r));
  }

  /** The fault hit the leader `from`: measure the failover (and, for a cut-off leader, its step-down). */
  failover(from: string, term: bigint, stepDown: boolean): void {
    this.measuring = this.failovers.watch(this.kind, from, term, this.t0, this.healed, stepDown);
  }

  /** The fault is healing: failover watches may stop once their 4 s are up. */
  end(): void {
    this.release();
  }

  /** Resolves when the failover measurement (if any) is over. */
  measured(): Promise<void> {
    return this.measuring;
  }
}
