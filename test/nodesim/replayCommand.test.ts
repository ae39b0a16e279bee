// A failure's replay line must give the same run: before, a run with --ms, --nodes, --clients or --profile
// printed only --seed (and --bug, --membership), which replays another trajectory.
import { describe, expect, it } from 'vitest';
import { replayCommand } from './replayCommand';

describe('replayCommand', () => {
  it('replay line keeps every option that shapes the seed (regression: --ms and --nodes were dropped)', () => {
    expect(replayCommand(7, {})).toBe('npm run sim -- --seed 7');
    expect(replayCommand(7, { nodes: 5, clients: 2, profile: 'lossy', faultyMs: 4000, bug: 'ack-before-sync', membership: false })).toBe(
      'npm run sim -- --seed 7 --nodes 5 --clients 2 --profile lossy --ms 4000 --bug ack-before-sync --no-membership',
    );
  });
});
