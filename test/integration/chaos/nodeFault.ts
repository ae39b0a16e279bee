// The shape of a node-lane fault handler: it gets the leader seen just before (undefined for delay, or
// when none answered) and the hold that times its failover; it injects, holds, heals and notes, and
// returns early with a "skipped" note when its target is taken by another fault.
import type { NodeStatus } from '../../../src/client';
import type { FaultContext } from './context';
import type { FaultHold } from './failovers';
import type { ScheduledFault } from './schedule';

export type NodeFault = (ctx: FaultContext, f: ScheduledFault, leader: NodeStatus | undefined, hold: FaultHold) => Promise<void>;
