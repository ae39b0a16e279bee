// Every command of `fencelock`, with --json, in an error case: one JSON object on stdout (code, reason,
// message, exit code), nothing on stderr. The cases are checked against the program's own command tree, so
// a command added later without a case here fails this test.
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram, runCli } from '../../src/cli/program';
import { freePorts } from './harness';

interface Case {
  args: string[];
  exit: number;
  /** The command changes something, so a call that gave up may have happened: `indeterminate` says so. */
  mutating?: boolean;
}

const USAGE = 1;
const UNAVAILABLE = 3;

function cases(dir: string): Record<string, Case> {
  const fenced = ['--lock', 'l', '--token', '5', '--session', 's'];
  return {
    serve: { args: ['serve', '--config', path.join(dir, 'missing.json')], exit: USAGE },
    lock: { args: ['lock', 'l', '--', 'true'], exit: UNAVAILABLE, mutating: true },
    'kv put': { args: ['kv', 'put', 'k', 'v', ...fenced], exit: UNAVAILABLE, mutating: true },
    'kv delete': { args: ['kv', 'delete', 'k', ...fenced], exit: UNAVAILABLE, mutating: true },
    'kv get': { args: ['kv', 'get', 'k'], exit: UNAVAILABLE },
    'kv list': { args: ['kv', 'list', 'k/'], exit: UNAVAILABLE },
    'kv move': { args: ['kv', 'move', 'k', '--to', 'l2'], exit: UNAVAILABLE, mutating: true },
    'auth whoami': { args: ['auth', 'whoami'], exit: UNAVAILABLE },
    'auth list': { args: ['auth', 'list'], exit: UNAVAILABLE },
    'auth user add': { args: ['auth', 'user', 'add', 'alice'], exit: UNAVAILABLE, mutating: true },
    'auth user delete': { args: ['auth', 'user', 'delete', 'alice'], exit: UNAVAILABLE, mutating: true },
    'auth user grant': { args: ['auth', 'user', 'grant', 'alice', 'ops'], exit: UNAVAILABLE, mutating: true },
    'auth user revoke': { args: ['auth', 'user', 'revoke', 'alice', 'ops'], exit: UNAVAILABLE, mutating: true },
    'auth role add': { args: ['auth', 'role', 'add', 'ops'], exit: UNAVAILABLE, mutating: true },
    'auth role delete': { args: ['auth', 'role', 'delete', 'ops'], exit: UNAVAILABLE, mutating: true },
    'auth role quota': { args: ['auth', 'role', 'quota', 'ops', 'sessions'], exit: USAGE },
    'auth grant': { args: ['auth', 'grant', 'ops', 'lock', 'jobs/'], exit: UNAVAILABLE, mutating: true },
    'auth revoke': { args: ['auth', 'revoke', 'ops', 'nonsense', 'jobs/'], exit: USAGE },
    'auth token issue': { args: ['auth', 'token', 'issue', 'alice'], exit: UNAVAILABLE, mutating: true },
    'auth token revoke': { args: ['auth', 'token', 'revoke', 'not-an-id'], exit: USAGE },
    'certs init': { args: ['certs', 'init', path.join(dir, 'certs'), '--nodes', ' , '], exit: USAGE },
    'certs node': { args: ['certs', 'node', 'bad name', path.join(dir, 'certs')], exit: USAGE },
    'member list': { args: ['member', 'list'], exit: UNAVAILABLE },
    'member add': { args: ['member', 'add', 'n4', '--peer', '127.0.0.1:1', '--client', '127.0.0.1:2'], exit: UNAVAILABLE, mutating: true },
    'member promote': { args: ['member', 'promote', 'n4'], exit: UNAVAILABLE, mutating: true },
    'member remove': { args: ['member', 'remove', 'n4'], exit: UNAVAILABLE, mutating: true },
    'check-resource': { args: ['check-resource', '--lock', 'l'], exit: USAGE },
    'session list': { args: ['session', 'list'], exit: UNAVAILABLE },
    'session revoke': { args: ['session', 'revoke', '0123456789abcdef'], exit: UNAVAILABLE, mutating: true },
    proxy: { args: ['proxy', '--target', 'http://127.0.0.1:9', '--state', path.join(dir, 'proxy.log'), '--listen', 'nowhere'], exit: USAGE },
    status: { args: ['status', '--endpoints', 'not an endpoint'], exit: USAGE },
    'snapshot save': { args: ['snapshot', 'save', path.join(dir, 'backup.snap')], exit: UNAVAILABLE },
    'snapshot status': { args: ['snapshot', 'status', path.join(dir, 'missing.snap')], exit: USAGE },
    'snapshot restore': { args: ['snapshot', 'restore', path.join(dir, 'missing.snap'), '--data-dir', path.join(dir, 'data'), '--member', 'n1', '--bump'], exit: USAGE },
    describe: { args: ['describe', 'l'], exit: UNAVAILABLE },
    locks: { args: ['locks', 'l/'], exit: UNAVAILABLE },
    revoke: { args: ['revoke', 'l', '--reason', 'stuck'], exit: UNAVAILABLE, mutating: true },
    elect: { args: ['elect', 'e', 'v', '--', 'true'], exit: UNAVAILABLE, mutating: true },
    watch: { args: ['watch', 'l'], exit: UNAVAILABLE },
  };
}

/** "kv put" for every command without subcommands. */
function leafCommands(cmd: Command, prefix: string[] = []): string[] {
  return cmd.commands.flatMap((c) => {
    const p = [...prefix, c.name()];
    return c.commands.length === 0 ? [p.join(' ')] : leafCommands(c, p);
  });
}

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(args, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: { FENCELOCK_INSECURE: '1' }, signals: new EventEmitter() });
  return { code, out, err };
}

describe('--json in an error case, for every command', () => {
  let dir: string;
  let endpoints: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-cli-json-'));
    // Nothing listens on them: every call is refused.
    endpoints = (await freePorts(3)).map((p) => `127.0.0.1:${p}`).join(',');
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('has a case for each command the program has', () => {
    const program = buildProgram({ stdout: () => undefined, stderr: () => undefined, env: {}, signals: new EventEmitter() }, () => undefined);
    expect(leafCommands(program).sort()).toEqual(Object.keys(cases(dir)).sort());
  });

  it('prints one JSON error object on stdout with the exit code it exits with', async () => {
    for (const [name, c] of Object.entries(cases(dir))) {
      const r = await run(['--endpoints', endpoints, '--timeout', '5000', '--json', ...c.args]);
      expect(r.code, name).toBe(c.exit);
      expect(r.err, name).toBe('');
      expect(r.out.endsWith('\n') && r.out.indexOf('\n') === r.out.length - 1, `${name}: one line`).toBe(true);
      const { error } = JSON.parse(r.out) as { error: Record<string, unknown> };
      expect(error, name).toMatchObject({ code: expect.any(String), message: expect.any(String), exitCode: c.exit });
      expect(error, name).toHaveProperty('reason');
      expect(error.message, name).not.toMatch(/Resolution note|No connection established/);
      if (c.exit === UNAVAILABLE) {
        expect(error.message, name).toContain('no leader: 0 of 3 nodes reachable; all refused connections');
        // Every connection was refused: the request never left, so even a change certainly did not happen.
        if (c.mutating) expect(error.indeterminate, name).toBe(false);
        else expect(error, name).not.toHaveProperty('indeterminate');
      }
    }
  });

  it('refuses, before connecting, what several lock names cannot be taken with', async () => {
    const refused: Array<[string[], string]> = [
      [['--permits', '2'], '--permits takes one semaphore NAME'],
      [['--shared'], '--shared takes one NAME'],
      [['--lock-delay', '0s'], '--lock-delay takes one NAME'],
    ];
    for (const [flags, message] of refused) {
      const r = await run(['--json', 'lock', 'a', 'b', ...flags, '--', 'true']);
      expect(r.code, message).toBe(USAGE);
      expect(JSON.parse(r.out), message).toMatchObject({ error: { code: 'USAGE', exitCode: USAGE, message: expect.stringContaining(message) } });
    }
    const twice = await run(['--json', 'lock', 'a', 'b', 'a', '--', 'true']);
    expect(JSON.parse(twice.out)).toMatchObject({ error: { code: 'USAGE', message: 'lock: NAME "a" is given twice' } });
    // Without `--` the words after NAME are CMD, as they always were: one lock, and CMD `b` (unreachable here: exit 3).
    const noDashDash = await run(['--json', '--endpoints', '127.0.0.1:1', '--timeout', '300', 'lock', 'a', 'b', '--shared']);
    expect(JSON.parse(noDashDash.out)).toMatchObject({ error: { exitCode: UNAVAILABLE } });
  });

  it('reports commander\'s own usage errors as JSON too', async () => {
    for (const args of [['frobnicate'], ['kv', 'get'], ['--timeout', 'soon', 'status'], ['lock', 'l', 'ls', '-l'], ['lock', 'l', '--lock-delay', '61s', '--', 'true'], ['lock', 'l', '--lock-delay', '5h', '--', 'true'], ['lock', 'l', '--shared', '--lock-delay', '5s', '--', 'true'], ['lock', 'l', '--permits', '0', '--', 'true'], ['lock', 'l', '--permits', '1025', '--', 'true'], ['lock', 'l', '--permits', '2', '--shared', '--', 'true'],
      // Several names (AcquireAll) take exclusive locks with no lock-delay, each name once (issue 33).
      ['lock', 'a', 'b', '--permits', '2', '--', 'true'],
      ['lock', 'a', 'b', '--shared', '--', 'true'],
      ['lock', 'a', 'b', '--lock-delay', '5s', '--', 'true'],
      ['lock', 'a', 'b', 'a', '--', 'true'],
      ['lock', ...Array.from({ length: 65 }, (_, i) => `n${i}`), '--', 'true']]) {
      const r = await run(['--json', ...args]);
      expect(r.code, args.join(' ')).toBe(USAGE);
      expect(r.err, args.join(' ')).toBe('');
      expect(JSON.parse(r.out), args.join(' ')).toMatchObject({ error: { code: 'USAGE', exitCode: USAGE, message: expect.any(String) } });
    }
  });
});
