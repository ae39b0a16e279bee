/**
 * The simulated network under each node's memory carrier (src/transport/memoryCarrier.ts): dials, stream
 * signals and frames cross it as events on the World, at the receiving node's current incarnation. A cut link
 * carries no dial or frame (a dial into it times out in the shipped policy); frames also get the Network's
 * loss, delay and duplication. Signals (a stream's acceptance, refusal or end) take 1 ms, wait for a cut link
 * to heal as TCP's retransmissions do, and draw no randomness, so that no other consumer of the network's
 * stream moves.
 */
import type { MemoryCarrier, MemoryWire } from '../../src/transport/memoryCarrier';
import type { Network } from './network';
import type { SimNode } from './simNode';
import type { World } from './world';

export interface SimWireOptions {
  /** Whether the network may deliver a frame twice. */
  duplicate: boolean;
  /** Rewrites a frame before it is carried (a test's way to lose some messages); undefined drops it. */
  rewrite?: (from: string, to: string, frame: Uint8Array) => Uint8Array | undefined;
}

const SIGNAL_MS = 1;
const SIGNAL_RETRY_MS = 100;

export class SimWire implements MemoryWire {
  constructor(
    private readonly world: World,
    private readonly net: Network,
    private readonly nodes: () => readonly SimNode[],
    private readonly opts: SimWireOptions,
  ) {}

  dial(from: string, address: string, run: (at: MemoryCarrier | undefined) => void): void {
    const target = this.nodes().find((n) => n.config.peerListen === address);
    if (target === undefined) {
      // Nobody at that address: the dialler's own host refuses at once.
      this.signal(from, from, () => run(undefined));
      return;
    }
    // A dial into a cut link is a SYN into a black hole: the dialler's connect timeout notices.
    if (this.net.isCut(from, target.id)) return;
    this.world.at(this.world.now + SIGNAL_MS, target.actor, () => run(target.carrier));
  }

  /**
   * A stream's acceptance, refusal or end is not lost to a cut link: TCP retransmits it, so it arrives once
   * the link heals (checked every SIGNAL_RETRY_MS, without randomness).
   */
  signal(from: string, to: string, run: (at: MemoryCarrier | undefined) => void): void {
    const target = this.nodes().find((n) => n.id === to);
    if (!target) return;
    const attempt = (): void => {
      if (this.net.isCut(from, to)) this.world.at(this.world.now + SIGNAL_RETRY_MS, target.actor, attempt);
      else run(target.carrier);
    };
    this.world.at(this.world.now + SIGNAL_MS, target.actor, attempt);
  }

  frame(from: string, to: string, frame: Uint8Array, run: (at: MemoryCarrier | undefined, frame: Uint8Array) => void): void {
    const target = this.nodes().find((n) => n.id === to);
    if (!target) return;
    const carried = this.opts.rewrite ? this.opts.rewrite(from, to, frame) : frame;
    if (carried === undefined) return;
    for (const d of this.net.delays(from, to, this.opts.duplicate)) this.world.at(this.world.now + d, target.actor, () => run(target.carrier, carried));
  }
}
