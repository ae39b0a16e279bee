/**
 * The command that replays one seed of a run: every option that shapes a seed's run goes with it (the seed
 * alone replays a different run when the cluster size, clients, profile, faulty phase, planted bug or
 * membership choice was given).
 */
export interface SeedShape {
  nodes?: number;
  clients?: number;
  profile?: string;
  bug?: string;
  faultyMs?: number;
  membership?: boolean;
}

export function replayCommand(seed: number, shape: SeedShape): string {
  const parts = ['npm run sim --', '--seed', String(seed)];
  if (shape.nodes !== undefined) parts.push('--nodes', String(shape.nodes));
  if (shape.clients !== undefined) parts.push('--clients', String(shape.clients));
  if (shape.profile !== undefined) parts.push('--profile', shape.profile);
  if (shape.faultyMs !== undefined) parts.push('--ms', String(shape.faultyMs));
  if (shape.bug !== undefined) parts.push('--bug', shape.bug);
  if (shape.membership !== undefined) parts.push(shape.membership ? '--membership' : '--no-membership');
  return parts.join(' ');
}
