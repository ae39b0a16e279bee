// The README's CLI section covers the CLI: every command and every flag that `fencelock --help` (and each
// command's own --help) shows is named there. Read from the built CLI's help, so a new command or flag
// without a README line fails here.
import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../integration/harness';

const CLI = path.join(PROJECT_ROOT, 'dist/src/cli/main.js');
const run = promisify(execFile);

export interface HelpPage {
  commands: string[];
  flags: string[];
}

/** The subcommand names and long flags of one commander help page (help itself left out). */
export function parseHelp(text: string): HelpPage {
  const section = (title: string): string[] => {
    const m = new RegExp(`^${title}:\\n((?:  .*\\n?)*)`, 'm').exec(text);
    return m ? m[1]!.split('\n').filter((l) => /^ {2}\S/.test(l)) : [];
  };
  const commands = section('Commands')
    .map((l) => l.trim().split(/\s+/)[0]!.split('|')[0]!)
    .filter((c) => c !== 'help');
  const flags = section('Options')
    .flatMap((l) => [...l.matchAll(/(?:^|[ ,])(--[a-z][a-z0-9-]*)/g)].map((m) => m[1]!))
    .filter((f) => f !== '--help');
  return { commands, flags };
}

async function help(command: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [CLI, ...command, '--help'], { env: { ...process.env, NO_COLOR: '1' } });
  return stdout;
}

/** Every command path (`kv get`) with its flags, walking the help pages from the top. */
async function commandTree(): Promise<Map<string, string[]>> {
  const tree = new Map<string, string[]>();
  let level: string[][] = [[]];
  while (level.length > 0) {
    const pages = await Promise.all(level.map(async (cmd) => ({ cmd, page: parseHelp(await help(cmd)) })));
    for (const { cmd, page } of pages) tree.set(cmd.join(' '), page.flags);
    level = pages.flatMap(({ cmd, page }) => page.commands.map((sub) => [...cmd, sub]));
  }
  return tree;
}

/** The README's "### The CLI" section, up to the next heading of its level or above. */
export function cliSection(readme: string): string {
  const m = /^### The CLI\b[^\n]*\n([\s\S]*?)(?=^#{1,3} )/m.exec(readme);
  if (!m) throw new Error('README.md has no "### The CLI" section');
  return m[1]!;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
const mentionsCommand = (text: string, cmd: string): boolean =>
  new RegExp(`fencelock ${cmd.split(' ').map(escape).join(' +')}(?![\\w-])`).test(text);
const mentionsFlag = (text: string, flag: string): boolean => new RegExp(`${escape(flag)}(?![\\w-])`).test(text);

describe('the README lists every command and flag of the CLI', () => {
  let tree: Map<string, string[]>;
  let section: string;
  beforeAll(async () => {
    tree = await commandTree();
    section = cliSection(readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8'));
  });

  it('reads the command tree from --help', () => {
    // The walk reaches nested commands and their flags (a broken parse would find nothing to check).
    expect(tree.get('')).toContain('--endpoints');
    expect(tree.get('kv get')).toContain('--stale');
    expect([...tree.keys()]).toContain('auth user add');
    expect(tree.size).toBeGreaterThan(20);
  });

  it('every command is named in the CLI section', () => {
    const missing = [...tree.keys()].filter((cmd) => cmd !== '' && !mentionsCommand(section, cmd));
    expect(missing.map((c) => `fencelock ${c}`)).toEqual([]);
  });

  it('every flag is named in the CLI section', () => {
    const missing = [...tree.entries()].flatMap(([cmd, flags]) =>
      flags.filter((f) => !mentionsFlag(section, f)).map((f) => `fencelock ${cmd ? `${cmd} ` : ''}${f}`),
    );
    expect(missing).toEqual([]);
  });

  it('says how to run the CLI without a global install (npx fencelock, the package bin)', async () => {
    const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(Object.keys(pkg.bin)).toEqual(['fencelock']);
    expect(section).toMatch(/npx fencelock/);
    // Regression: tsc writes dist/src/cli/main.js without the x bit; a clone whose path npx had linked before
    // ran it as it was ("Permission denied"). The build marks it executable.
    expect(statSync(path.join(PROJECT_ROOT, pkg.bin.fencelock!)).mode & 0o111).toBe(0o111);
    // What the README promises: from the checkout, npx runs this package's own bin, offline.
    const npx = await run('npx', ['--offline', 'fencelock', '--help'], { cwd: PROJECT_ROOT, env: { ...process.env, NO_COLOR: '1' } });
    expect(npx.stdout).toBe(await help([]));
  });

  it('the matchers miss what is absent', () => {
    expect(parseHelp('Usage: x\n\nOptions:\n  --a <v>  an a\n  -b, --bee  a b\n  -h, --help  help\n\nCommands:\n  get [options] <k>  g\n  help [command]  h\n')).toEqual({
      commands: ['get'],
      flags: ['--a', '--bee'],
    });
    expect(mentionsCommand('fencelock kv getter', 'kv get')).toBe(false);
    expect(mentionsCommand('- `fencelock kv get KEY [--stale]`', 'kv get')).toBe(true);
    expect(mentionsFlag('--stale-ok', '--stale')).toBe(false);
  });
});
