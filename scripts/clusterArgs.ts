// The arguments of `npm run cluster -- ...`, checked before anything is started or signalled: an unknown
// command, a missing or unknown node id, or a stray argument is a usage error (exit 2), never a no-op.

export const USAGE_EXIT = 2;

export const USAGE = `usage: npm run cluster -- [COMMAND] [ID] [--five]
  run                  every node in the foreground, prefixed logs; Ctrl-C stops them (the default)
  start [ID]           start every node (or ID) in the background and wait until each answers
  stop [ID]            stop every node (followers first, the leader last), or ID
  status               each node's own answer (role, term, leader, commit, lag) and its process
  pause ID | resume ID SIGSTOP / SIGCONT one node
  kill ID              SIGKILL one node
  restart ID           SIGKILL one node and start it again
  --five               the 5-node cluster (cluster/five/) instead of the 3-node one`;

export type ClusterCommand = 'run' | 'start' | 'stop' | 'status' | 'pause' | 'resume' | 'kill' | 'restart';

export interface ClusterArgs {
  cmd: ClusterCommand;
  id?: string;
  five: boolean;
}

const ID_REQUIRED: ReadonlySet<string> = new Set(['pause', 'resume', 'kill', 'restart']);
const ID_OPTIONAL: ReadonlySet<string> = new Set(['start', 'stop']);
const NO_ID: ReadonlySet<string> = new Set(['run', 'status']);

/** The parsed arguments, or the message that explains what is wrong with them. */
export function parseClusterArgs(argv: string[], idsOf: (five: boolean) => string[]): ClusterArgs | { error: string } {
  const five = argv.includes('--five');
  const flags = argv.filter((a) => a.startsWith('-') && a !== '--five');
  if (flags.length > 0) return { error: `unknown option ${flags[0]}` };
  const [cmd = 'run', id, ...extra] = argv.filter((a) => a !== '--five');
  if (!ID_REQUIRED.has(cmd) && !ID_OPTIONAL.has(cmd) && !NO_ID.has(cmd)) return { error: `unknown command "${cmd}"` };
  if (extra.length > 0) return { error: `unexpected argument "${extra[0]}"` };
  if (id === undefined && ID_REQUIRED.has(cmd)) return { error: `${cmd} needs a node id (${idsOf(five).join(', ')})` };
  if (id !== undefined && NO_ID.has(cmd)) return { error: `${cmd} takes no node id (got "${id}")` };
  if (id !== undefined && !idsOf(five).includes(id)) {
    const hint = idsOf(!five).includes(id) ? ` (${id} is in the ${five ? '3' : '5'}-node cluster${five ? ': drop --five' : ': add --five'})` : '';
    return { error: `unknown node "${id}": this cluster has ${idsOf(five).join(', ')}${hint}` };
  }
  return { cmd: cmd as ClusterCommand, id, five };
}
