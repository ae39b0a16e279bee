// The README's "A lock's life from a shell" example (issue 34), run as written: one bash fed the block's lines
// one at a time, `fencelock` on its PATH being this build's CLI pointed at a real 3-node TLS cluster. Each
// line must exit and print what its comment says: labels shown, the revoked holder exiting 4, a try-lock in
// the lock-delay exiting 3 with LOCK_DELAYED, and a waiter granted after the delay with a higher token.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FenceLockClient } from '../../src/client';
import { CLI } from '../integration/childProcesses';
import { clusterWithLeader } from '../integration/clusterWithLeader';
import { eventually, PROJECT_ROOT, type LocalCluster } from '../integration/harness';

/** The lines of the ```sh block after `<!-- example:lifecycle -->` in the README. */
export function lifecycleExample(readme: string): string[] {
  const block = /<!-- example:lifecycle -->\n```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('README.md has no example:lifecycle ```sh block');
  return block.split('\n').filter((l) => l.trim() !== '');
}

interface LineResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * One bash reading its script from a pipe, so that a line's background job (`&`, `$!`, `wait`) stays in the
 * shell the later lines run in. Each line runs with stdin from /dev/null (a command must not read the script),
 * followed by a marker carrying its exit code on stdout and stderr.
 */
class Shell {
  private readonly bash: ChildProcessWithoutNullStreams;
  private out = '';
  private err = '';
  private lines = 0;
  private readonly exited: Promise<void>;

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    // Its own process group: stopping the shell stops its background jobs and their children too.
    this.bash = spawn('bash', [], { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    this.bash.stdout.on('data', (d: Buffer) => (this.out += d.toString()));
    this.bash.stderr.on('data', (d: Buffer) => (this.err += d.toString()));
    this.exited = new Promise((resolve) => this.bash.once('exit', () => resolve()));
  }

  /** Everything the shell and its jobs wrote to stderr so far. */
  get allStderr(): string {
    return this.err;
  }

  async run(line: string): Promise<LineResult> {
    const n = this.lines++;
    const [outStart, errStart] = [this.out.length, this.err.length];
    this.bash.stdin.write(`{ ${line}\n} </dev/null\necho "@@end ${n} $?@@"; echo "@@end ${n}@@" >&2\n`);
    const marker = new RegExp(`@@end ${n} (\\d+)@@\\n`);
    const code = await eventually(() => marker.exec(this.out)?.[1], 90_000, `line ${n} to finish: ${line}`);
    await eventually(() => (this.err.includes(`@@end ${n}@@\n`) ? true : undefined), 10_000, `line ${n}'s stderr marker`);
    return {
      code: Number(code),
      stdout: this.out.slice(outStart).replace(marker, ''),
      stderr: this.err.slice(errStart).replace(`@@end ${n}@@\n`, ''),
    };
  }

  async stop(): Promise<void> {
    try {
      process.kill(-this.bash.pid!, 'SIGKILL');
    } catch {
      // Already gone, with every process of its group.
    }
    await this.exited;
  }
}

describe("the README's lock lifecycle from a shell", () => {
  let cluster: LocalCluster;
  let client: FenceLockClient;
  let shell: Shell;

  beforeAll(async () => {
    ({ cluster, client } = await clusterWithLeader({}, 30_000));
    // `fencelock` as the reader has it on PATH: this build's CLI. The harness put the cluster's CA and client
    // certificate in FENCELOCK_CACERT/CERT/KEY; FENCELOCK_ENDPOINTS points it at this cluster.
    const bin = path.join(cluster.dir, 'bin');
    mkdirSync(bin);
    writeFileSync(path.join(bin, 'fencelock'), `#!/bin/sh\nexec '${process.execPath}' '${CLI}' "$@"\n`);
    chmodSync(path.join(bin, 'fencelock'), 0o755);
    shell = new Shell(cluster.dir, { ...process.env, PATH: `${bin}:${process.env.PATH}`, FENCELOCK_ENDPOINTS: cluster.endpoints.join(',') });
  });

  afterAll(async () => {
    await shell?.stop();
    await client?.close();
    await cluster?.destroy();
  });

  it('holds with a label, lists it, revokes it into its lock-delay, refuses a try-lock, then grants a waiter a higher token', async () => {
    const lines = lifecycleExample(readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8'));
    // The checks below follow the block's order: a reordered or new line must come with its own check.
    expect(lines.map((l) => /^(fencelock \S+(?: \S+)?|wait)/.exec(l)?.[1])).toEqual([
      'fencelock lock invoices',
      'fencelock describe invoices',
      'fencelock locks',
      'fencelock session list',
      'fencelock revoke invoices',
      'fencelock lock invoices',
      'wait',
      'fencelock lock invoices',
    ]);
    const [hold, describeLine, locks, sessions, revoke, tryLock, waitHolder, waiter] = lines as [string, ...string[]];
    expect(hold).toMatch(/--label team=billing --lock-delay \d+s -- .*&/);

    expect(await shell.run(hold)).toMatchObject({ code: 0 });
    // The holder runs in the background: the reader waits for it as the next lines do, by looking.
    const held = await eventually(async () => {
      const d = await client.describe('invoices');
      return d.held ? d : undefined;
    }, 30_000, 'the background holder to hold invoices');
    const token = held.token.toString();
    const handle = held.holderSession;
    expect(handle).toMatch(/^[0-9a-f]{16}$/);

    const described = await shell.run(describeLine!);
    expect([described.code, described.stderr]).toEqual([0, '']);
    expect(described.stdout).toMatch(new RegExp(`^holder: +${handle}$`, 'm'));
    expect(described.stdout).toMatch(/^holder client: +"fencelock lock invoices \(pid \d+\)" .*\bpid=\d+\b.*\bteam=billing\b/m);
    expect(described.stdout).toMatch(/^holder client: .*\bhost=\S+/m);
    expect(described.stdout).toMatch(new RegExp(`^token: +${token}$`, 'm'));

    const listed = await shell.run(locks!);
    expect([listed.code, listed.stderr]).toEqual([0, '']);
    expect(listed.stdout).toMatch(/^LOCK +HOLDER +TOKEN +HELD +WAITERS +CLIENT$/m);
    expect(listed.stdout).toMatch(new RegExp(`^invoices +${handle} +${token} +\\S+ +- +"fencelock lock invoices \\(pid \\d+\\)" .*team=billing$`, 'm'));

    const open = await shell.run(sessions!);
    expect([open.code, open.stderr]).toEqual([0, '']);
    expect(open.stdout).toMatch(new RegExp(`^${handle} .*team=billing.* locks invoices$`, 'm'));

    // The background holder reports its loss on the same stderr, whenever it notices: not this line's output.
    const holderLoss = `fencelock: lock "invoices" (token ${token}) was revoked`;
    const own = (stderr: string): string => stderr.split('\n').filter((l) => !l.startsWith(holderLoss)).join('\n');
    const revoked = await shell.run(revoke!);
    expect([revoked.code, own(revoked.stderr)]).toEqual([0, '']);
    const delay = new RegExp(`^lock "invoices": grant with token ${token} revoked; the lock is in its lock-delay until (\\S+) \\(`, 'm').exec(revoked.stdout);
    expect(delay, revoked.stdout).not.toBeNull();
    const delayedUntil = Date.parse(delay![1]!);
    expect(delayedUntil).toBeGreaterThan(0);

    const tried = await shell.run(tryLock!);
    expect(tried.code).toBe(3);
    expect(own(tried.stderr)).toMatch(/^fencelock: LOCK_DELAYED: lock "invoices" is in its lock-delay .*CMD was not run$/m);

    const holderExit = await shell.run(waitHolder!);
    expect([holderExit.code, holderExit.stdout]).toEqual([0, 'holder exited 4\n']);
    expect(shell.allStderr).toContain(`${holderLoss}: lock "invoices" (token ${token}) was revoked by an admin; session ${handle} goes on; stopping the command\n`);

    const granted = await shell.run(waiter!);
    expect([granted.code, granted.stderr]).toEqual([0, '']);
    const next = /^granted token (\d+)$/m.exec(granted.stdout);
    expect(next, granted.stdout).not.toBeNull();
    expect(BigInt(next![1]!)).toBeGreaterThan(BigInt(token));
    // Nobody got the lock before the delay the revoke announced had run out (same machine, same clock).
    expect(Date.now()).toBeGreaterThanOrEqual(delayedUntil);
  });
});
