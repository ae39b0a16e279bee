/**
 * Membership changes in the whole-node simulator, during the faulty phase: a brand-new node (empty disk,
 * started in join mode) added as a learner, promoted once the leader accepts it as caught up, voters removed
 * (sometimes the leader itself), crashed voters replaced (removed, then a fresh node added). The cluster
 * keeps 3..5 voters. Changes are proposed with driver.proposeConfChange, as Cluster.Member* does; a
 * refusal (one change in flight, a leader not ready, a learner behind) is an answer, not a failure.
 * Every choice comes from the seed's own 'membership' stream, so that no other consumer moves.
 */
import { ConfChangeRefusedError, applyConfChange, type ConfChange, type FullConfig } from '../../src/raft';
import { NodeStoppedError, NotLeaderError, OutcomeUnknownError } from '../../src/node/raftDriver';
import type { Prng } from '../support/prng';
import type { SimNode } from './simNode';
import type { Actor, World } from './world';

/** Every fifth seed changes membership (none of the seeds pinned before membership existed is one). */
export function membershipForSeed(seed: number): boolean {
  return Math.abs(Math.trunc(seed)) % 5 === 0;
}

const EVERY_MS = 400;
const MIN_VOTERS = 3;
const MAX_MEMBERS = 5;

/** What the simulation lends the membership actions. */
export interface MembershipHost {
  readonly world: World;
  readonly faultyMs: number;
  readonly nodes: readonly SimNode[];
  leader(): SimNode | undefined;
  startJoiner(id: string, voters: readonly string[]): SimNode;
  retire(node: SimNode, why: string): void;
  countChange(committed: boolean): void;
  trace(line: string): void;
  fail(what: string): void;
}

export class Membership {
  /** Names handed out so far: a new machine always gets a new one (removed names are never reused). */
  private named: number;
  /** The actor of the membership schedule (never stalled, never crashed). */
  private readonly sim: Actor;

  constructor(
    private readonly host: MembershipHost,
    private readonly prng: Prng,
  ) {
    this.named = host.nodes.length;
    this.sim = host.world.actor('membership', 1, 0, 0);
  }

  /** One chance of a change every EVERY_MS of the faulty phase. */
  schedule(): void {
    const step = (): void => {
      if (this.host.world.now >= this.host.faultyMs) return;
      if (this.prng.chance(0.35)) this.act();
      this.host.world.at(this.host.world.now + EVERY_MS, this.sim, step);
    };
    this.host.world.at(1_500, this.sim, step);
  }

  /** A new leader is sometimes asked at once, before it committed an entry of its term (it must refuse). */
  elected(node: SimNode): void {
    if (!this.prng.chance(0.3)) return;
    this.host.world.at(this.host.world.now, this.sim, () => {
      if (node.runtime?.driver.isLeader()) this.act(node);
    });
  }

  private act(leader = this.host.leader()): void {
    const driver = leader?.runtime?.driver;
    if (!leader || !driver) return;
    const config = driver.config();
    const first = this.choose(config, leader.id);
    if (!first) return;
    this.propose(leader, first);
    // Now and then a second change right behind the first: refused while the first is uncommitted.
    if (!this.prng.chance(0.25)) return;
    const after = applyConfChange(config, first);
    const second = typeof after === 'string' ? undefined : this.choose(after, leader.id);
    if (second) this.propose(leader, second);
  }

  /** The next change for configuration `c` (led by `leaderId`), keeping 3..5 voters. */
  private choose(c: FullConfig, leaderId: string): ConfChange | undefined {
    const learner = c.learners[0];
    if (learner !== undefined) return { type: 'promote', node: learner };
    const down = c.voters.filter((v) => !this.host.nodes.find((n) => n.id === v)?.up);
    const voters = c.voters.length;
    // Replacing a crashed voter: remove it first when the cluster can spare it; the add follows.
    if (voters > MIN_VOTERS && down.length > 0 && this.prng.chance(0.7)) return { type: 'remove', node: this.prng.pick(down) };
    if (voters < MAX_MEMBERS && (voters === MIN_VOTERS || this.prng.chance(0.5))) return this.newMember(c);
    if (voters <= MIN_VOTERS) return undefined;
    const others = c.voters.filter((v) => v !== leaderId);
    return { type: 'remove', node: this.prng.chance(0.3) ? leaderId : this.prng.pick(others) };
  }

  private newMember(c: FullConfig): ConfChange {
    const node = `n${++this.named}`;
    this.host.startJoiner(node, c.voters);
    return { type: 'add-learner', node, address: { client: `${node}.sim:7000`, peer: `${node}.sim:7100` } };
  }

  private propose(leader: SimNode, change: ConfChange): void {
    const driver = leader.runtime!.driver;
    const what = `${change.type} ${change.node}`;
    const before = driver.config();
    const answer = driver.proposeConfChange(change);
    // config() is the same object until a change is appended: a refusal left the log untouched.
    const appended = driver.config() !== before;
    this.host.trace(`MEMBERSHIP ${leader.id} proposes ${what}${appended ? '' : ' (not appended)'}`);
    answer.then(
      (index) => {
        this.host.countChange(true);
        this.host.trace(`MEMBERSHIP ${what} committed at ${index}`);
        // A voter removed while down never hears of it: it is not started again.
        const gone = this.host.nodes.find((n) => n.id === change.node);
        if (change.type === 'remove' && gone && !gone.up) this.host.retire(gone, 'removed while down');
      },
      (err: unknown) => {
        const known = err instanceof ConfChangeRefusedError || err instanceof NotLeaderError || err instanceof NodeStoppedError || err instanceof OutcomeUnknownError;
        if (!known) return this.host.fail(`${leader.id} answered ${what} with an unexpected error: ${(err as Error)?.stack ?? String(err)}`);
        this.host.countChange(false);
        this.host.trace(`MEMBERSHIP ${what} refused: ${err.message}`);
        // A machine whose add never reached the log waits for nothing: it is taken away again.
        const joiner = this.host.nodes.find((n) => n.id === change.node);
        if (change.type === 'add-learner' && !appended && joiner) this.host.retire(joiner, 'its add was refused');
      },
    );
  }
}
