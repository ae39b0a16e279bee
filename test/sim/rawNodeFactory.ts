/** The real core behind the simulator's factory seam. */
import { RawNode } from '../../src/raft';
import type { RaftFactory } from './raftApi';

export const rawNodeFactory: RaftFactory = (config, persisted) => new RawNode(config, persisted);
