// The README's gRPC examples, run as written (bash, scripts/grpc-call.ts) against a real 3-node TLS cluster:
// only the address, the session id and the token are this cluster's own. Each line must succeed and answer
// what the README says it does.
import { execFile } from 'node:child_process';
import { readFileSync, symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { eventually, LocalCluster, PROJECT_ROOT } from '../integration/harness';

/** The shell block of the README's "### gRPC" section, one command per entry (continuation lines joined). */
export function grpcExamples(readme: string): string[] {
  const section = /^### gRPC\b[^\n]*\n([\s\S]*?)(?=^#{1,3} )/m.exec(readme)?.[1];
  const block = section && /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('README.md has no ```sh block in its "### gRPC" section');
  const commands: string[] = [];
  for (const line of block.split('\n').filter((l) => l.trim() !== '')) {
    if (/^(\$G|G=)/.test(line) || commands.length === 0) commands.push(line);
    else commands[commands.length - 1] += `\n${line}`;
  }
  return commands;
}

function bash(script: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', script], { cwd, timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

describe("the README's gRPC examples", () => {
  let cluster: LocalCluster;
  let leader: string;
  let cwd: string;

  beforeAll(async () => {
    cluster = await LocalCluster.create();
    cluster.startAll();
    const client = new FenceLockClient({ endpoints: cluster.endpoints });
    try {
      leader = await eventually(async () => (await client.statusAll()).find((s) => s.ok && s.status.role === 'leader')?.endpoint, 15_000, 'a leader');
    } finally {
      await client.close();
    }
    // The examples run from a checkout whose local cluster keeps its CA in data/certs, and call dist/.
    cwd = cluster.dir;
    symlinkSync(cluster.certsDir!, path.join(cwd, 'data', 'certs'));
    symlinkSync(path.join(PROJECT_ROOT, 'dist'), path.join(cwd, 'dist'));
  });

  afterAll(async () => {
    await cluster?.destroy();
  });

  /** Runs the block's lines in order, as a reader would; returns each method's answer. */
  async function runBlock(): Promise<{ answers: Map<string, Record<string, unknown>>; session: string; token: string }> {
    const [setup, ...calls] = grpcExamples(readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8'));
    expect(setup).toMatch(/^G="node dist\/scripts\/grpc-call\.js -cacert data\/certs\/ca\.pem"\nC="me-\$\(date \+%s%N\)"/);
    // C is set once per run, as in the reader's shell.
    const client = (await bash(`${setup}\necho "$C"`, cwd)).stdout.trim();
    expect(client).toMatch(/^me-\d+$/);
    const answers = new Map<string, Record<string, unknown>>();
    let session = '';
    let token = '';
    for (const call of calls) {
      const method = /(fencelock\.v1\.\S+|list)\s*$/.exec(call)![1]!;
      const command = call
        .replaceAll('127.0.0.1:7001', leader)
        .replaceAll('<id>', session)
        .replaceAll(/"token":5\b/g, `"token":${token || 5}`);
      const r = await bash(`${setup}\nC=${client}\n${command}`, cwd);
      expect({ method, code: r.code, stderr: r.stderr }).toEqual({ method, code: 0, stderr: '' });
      if (method === 'list') {
        expect(r.stdout.split('\n')).toEqual(expect.arrayContaining(['fencelock.v1.Session', 'fencelock.v1.Lock', 'fencelock.v1.KV', 'fencelock.v1.Cluster', 'fencelock.v1.Auth']));
        continue;
      }
      const answer = JSON.parse(r.stdout) as Record<string, unknown>;
      answers.set(method, answer);
      if (method.endsWith('Session/Open')) session = String(answer.session_id);
      if (method.endsWith('Lock/Acquire')) token = String(answer.token);
    }
    return { answers, session, token };
  }

  it('every line runs and answers as described, and the block runs again as written (a new session, the lock again)', async () => {
    const runs = [];
    for (let i = 0; i < 2; i++) {
      const { answers, session, token } = await runBlock();
      runs.push({ session, token });
      expect(session).toMatch(/^[0-9a-f]{32}$/);
      expect(answers.get('fencelock.v1.Lock/Acquire')).toMatchObject({ acquired: true });
      expect(Number(token)).toBeGreaterThan(0);
      expect(Number(answers.get('fencelock.v1.KV/Write')?.index)).toBeGreaterThan(Number(token));
      // "aGVsbG8=" is "hello": the write landed under the lock's token.
      expect(answers.get('fencelock.v1.KV/Get')).toMatchObject({ found: true, value: 'aGVsbG8=', token, lock: 'invoices' });
      expect(answers.get('fencelock.v1.Cluster/Status')).toMatchObject({ role: 'leader', leader_address: leader });
      expect(answers.get('fencelock.v1.Lock/Release')).toBeDefined();
      expect(answers.get('fencelock.v1.Session/Close')).toEqual({});
    }
    // The second run is not answered from the first one's records: its own session, a newer grant.
    expect(runs[1]!.session).not.toBe(runs[0]!.session);
    expect(BigInt(runs[1]!.token)).toBeGreaterThan(BigInt(runs[0]!.token));
  });

  it('a refused call exits 1 with its status and fencelock metadata', async () => {
    const r = await bash(
      `node dist/scripts/grpc-call.js -cacert data/certs/ca.pem -d '{"header":{"client_id":"me","request_id":9},"lock":"invoices","token":1,"session_id":"${'0'.repeat(32)}","ops":[{"type":"PUT","key":"invoices/x","value":"eA=="}]}' ${leader} fencelock.v1.KV/Write`,
      cwd,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^ERROR: (FAILED_PRECONDITION|NOT_FOUND): /);
    expect(r.stderr).toMatch(/fencelock-reason: /);
  });

  it('bad arguments exit 2 with the usage', async () => {
    const r = await bash('node dist/scripts/grpc-call.js 127.0.0.1:1 fencelock.v1.Nope/Call', cwd);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no method fencelock.v1.Nope/Call; the services are: fencelock.v1.Auth, fencelock.v1.Cluster');
  });
});
