/**
 * A small cluster of real NodeRuntimes on virtual time for scripted regression tests: the simulator's
 * World, nodes and disks, with a perfect network (1 ms) unless a test cuts it, and no random faults.
 */
import type { PlantedBugs, NodeRuntime } from '../../src/node/runtime/nodeRuntime';
import { decodeMessageBatch, encodeMessageBatch } from '../../src/codec/raftCodec';
import type { Message } from '../../src/raft/types';
import { Prng } from '../support/prng';
import { Network } from './network';
import { Checker } from './raftInvariants';
import { observerFactory } from './raftObserver';
import { SimWire } from './simWire';
import { nodeLogger, simConfig, SimNode } from './simNode';
import { World, type WorldEvent } from './world';

export class ScriptedCluster {
  readonly world = new World();
  readonly nodes: SimNode[] = [];
  readonly net = new Network(new Prng(1));
  private readonly wire = new SimWire(this.world, this.net, () => this.nodes, { duplicate: false, rewrite: (_from, _to, frame) => this.rewrite(frame) });
  /** The simulator's Raft checker watches scripted runs too; run() throws its first violation. */
  private readonly checker: Checker;
  private raftViolation: Error | undefined;

  constructor(size: number, bugs?: PlantedBugs, opts: { snapshotEveryEntries?: number; wallOffset?: number; fsyncMs?: (id: string) => number } = {}) {
    this.net.faults = { drop: 0, duplicate: 0, minDelayMs: 1, maxDelayMs: 1 };
    const ids = Array.from({ length: size }, (_, i) => `n${i + 1}`);
    for (const id of ids) {
      const actor = this.world.actor(id, 1, 0, opts.wallOffset ?? 1.7e12);
      const node: SimNode = new SimNode(id, actor, simConfig(id, ids, opts.snapshotEveryEntries ?? 10_000), Prng.derive(7, id), () => opts.fsyncMs?.(id) ?? 1,
        this.wire, nodeLogger(id, undefined), { plantedBugs: bugs });
      this.nodes.push(node);
    }
    this.checker = new Checker(ids, (id) => this.nodes.find((n) => n.id === id)!.disk.storage.view('durable'));
    for (const n of this.nodes) this.start(n);
  }

  start(node: SimNode): void {
    void node.start(() => undefined, observerFactory(this.checker, node, (v) => (this.raftViolation ??= v)));
  }

  /** Drops the peer messages it returns false for (a test's way to lose one kind of message). */
  keep: (m: Message) => boolean = () => true;

  private rewrite(frame: Uint8Array): Uint8Array | undefined {
    const messages = decodeMessageBatch(frame).filter((m) => this.keep(m));
    return messages.length === 0 ? undefined : encodeMessageBatch(messages);
  }

  runtime(id: string): NodeRuntime {
    const rt = this.nodes.find((n) => n.id === id)?.runtime;
    if (!rt) throw new Error(`${id} is not running`);
    return rt;
  }

  leader(): SimNode | undefined {
    return this.nodes.find((n) => n.runtime?.driver.hasAppliedOwnTerm());
  }

  /** Runs events (and the promise jobs each starts) until `until` (real ms) or until `done()` holds. */
  async run(ms: number, done: () => boolean = () => false): Promise<void> {
    const until = this.world.now + ms;
    let ran: WorldEvent | undefined;
    for (;;) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      const actor = ran?.actor;
      if (actor) this.nodes.find((n) => n.actor === actor)?.observer?.observe();
      if (this.raftViolation) throw this.raftViolation;
      if (done()) return;
      ran = this.world.popNext(until);
      if (!ran) {
        this.world.now = Math.max(this.world.now, until);
        return;
      }
      ran.run();
    }
  }

  /** Runs until a leader has applied an entry of its term; returns it. */
  async elect(): Promise<SimNode> {
    await this.run(10_000, () => this.leader() !== undefined);
    const leader = this.leader();
    if (!leader) throw new Error('no leader within 10 s');
    return leader;
  }

  /** Calls a handler on a node at once (as if the request just arrived) and runs the cluster until it answers. */
  async call<T>(id: string, fn: (rt: NodeRuntime) => Promise<T>, maxMs = 5_000): Promise<T> {
    let result: { ok: true; value: T } | { ok: false; err: unknown } | undefined;
    fn(this.runtime(id)).then(
      (value) => (result = { ok: true, value }),
      (err: unknown) => (result = { ok: false, err }),
    );
    await this.run(maxMs, () => result !== undefined);
    if (!result) throw new Error(`no answer from ${id} within ${maxMs} ms`);
    if (!result.ok) throw result.err;
    return result.value;
  }

  stop(): void {
    for (const n of this.nodes) n.runtime?.duties.stop();
  }
}

let requests = 0;
/** A request header no other test uses. */
export function header(): { clientId: string; requestId: string; ackedBelow: string } {
  return { clientId: 'scripted', requestId: String(++requests), ackedBelow: '0' };
}
