// The knobs a test cluster may set in each node's config file. What a test leaves unset is the node's own
// default (src/node/config.ts), so the harnesses never restate those numbers.
import { CONFIG_DEFAULTS, type NodeConfig } from '../../src/node/config';

export type NodeKnobs = Pick<NodeConfig, 'tickMs' | 'electionTicks' | 'heartbeatTicks' | 'snapshotEveryEntries' | 'minSessionTtlMs' | 'logLevel' | 'peerCarrier'>;

/** Every knob, from `opts` where given (an explicit undefined counts as unset), else the node's default. */
export function nodeKnobs(opts: Partial<NodeKnobs>): NodeKnobs {
  return {
    tickMs: opts.tickMs ?? CONFIG_DEFAULTS.tickMs,
    electionTicks: opts.electionTicks ?? CONFIG_DEFAULTS.electionTicks,
    heartbeatTicks: opts.heartbeatTicks ?? CONFIG_DEFAULTS.heartbeatTicks,
    snapshotEveryEntries: opts.snapshotEveryEntries ?? CONFIG_DEFAULTS.snapshotEveryEntries,
    minSessionTtlMs: opts.minSessionTtlMs ?? CONFIG_DEFAULTS.minSessionTtlMs,
    logLevel: opts.logLevel ?? CONFIG_DEFAULTS.logLevel,
    peerCarrier: opts.peerCarrier ?? CONFIG_DEFAULTS.peerCarrier,
  };
}
