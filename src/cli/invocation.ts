// What the raw command line says before commander has parsed it (--json for usage errors, the lock
// command's CMD for the `--` hint), and what kind of command a parsed one is.
import type { Command } from 'commander';

/** Options (of the program and of `lock`) that take a value: their next word is not a positional. */
const VALUED = new Set(['--endpoints', '--cacert', '--cert', '--key', '--auth-token-file', '--auth-token', '--timeout', '--ttl', '--wait', '--grace']);

/** Commands that change nothing: "it may or may not have happened" (indeterminate) means nothing for them. */
const READ_ONLY = new Set(['kv get', 'kv list', 'describe', 'locks', 'watch', 'status', 'member list', 'auth list', 'auth whoami', 'session list', 'snapshot save', 'snapshot status', 'certs init', 'certs node', 'proxy', 'serve']);

/** `kv get` for the kv get command. */
function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

export function isReadOnly(cmd: Command): boolean {
  return READ_ONLY.has(commandPath(cmd));
}

/** --json among the words before `--` (after it they are CMD's). */
export function wantsJson(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).includes('--json');
}

/** A word as a shell would need it typed. */
function shellWord(w: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

/**
 * For `fencelock lock NAME CMD -l` (commander: unknown option '-l', which belongs to CMD): the same line with
 * `--` before CMD. undefined when the line is not a lock command or already has `--`.
 */
export function lockDashDashHint(args: string[]): string | undefined {
  if (args.includes('--')) return undefined;
  const own: string[] = [];
  const positionals: string[] = [];
  const foreign: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i] ?? '';
    const inCmd = positionals.length >= 3; // `lock`, NAME, then CMD's first word
    if (!inCmd && w.startsWith('-') && !knownFlag(w)) {
      foreign.push(w);
    } else if (!inCmd && w.startsWith('-')) {
      own.push(w);
      if (VALUED.has(w) && i + 1 < args.length) own.push(args[++i] as string);
    } else if (inCmd) {
      foreign.push(w);
    } else {
      positionals.push(w);
    }
  }
  const [sub, name, first] = positionals;
  if (sub !== 'lock' || name === undefined || (first === undefined && foreign.length === 0)) return undefined;
  const cmd = [...(first === undefined ? [] : [first]), ...foreign];
  // Options go after `lock NAME`: commander takes the program's options there too, and lock's own only there.
  return `put -- before the command: fencelock ${['lock', name, ...own].map(shellWord).join(' ')} -- ${cmd.map(shellWord).join(' ')}`;
}

/** Options of the program and of `lock` that take no value, and `--x=value` forms of the valued ones. */
function knownFlag(w: string): boolean {
  if (VALUED.has(w)) return true;
  const eq = w.indexOf('=');
  if (eq > 0 && VALUED.has(w.slice(0, eq))) return true;
  return w === '--json' || w === '--insecure';
}

/** How many words follow the first `--` (CMD's words for `lock`); undefined when there is no `--`. */
export function wordsAfterDashDash(args: string[]): number | undefined {
  const end = args.indexOf('--');
  return end < 0 ? undefined : args.length - end - 1;
}

/**
 * `lock A B C -- CMD`: commander hands over NAME and every later positional as one list, `--` dropped. The
 * last `cmdWords` of them (those after `--` on the raw line) are CMD; those before are more names. Without
 * `--` the line means what it always did: NAME, then CMD (`lock NAME ls` runs ls).
 */
export function lockNamesAndCommand(name: string, rest: string[], cmdWords: number | undefined): { names: string[]; command: string[] } {
  if (cmdWords === undefined) return { names: [name], command: rest };
  const split = Math.max(0, rest.length - cmdWords);
  return { names: [name, ...rest.slice(0, split)], command: rest.slice(split) };
}
