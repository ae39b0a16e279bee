// The README's gRPC promises checked by a second language: test/contract/python/conformance.py, a Python client
// written from lock.proto and the README alone (stubs generated from the proto when it runs), against a real
// 3-node cluster over TLS with the cluster's CA. scripts/ensure-python-grpc.sh installs Debian's python3-grpcio
// and python3-grpc-tools when missing.
import { execFileSync, spawn } from 'node:child_process';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, PROJECT_ROOT } from '../integration/harness';

// Debian's interpreter by path: a python3 earlier on PATH (pyenv, a venv) does not see Debian's packages.
const PYTHON = '/usr/bin/python3';
const PROGRAM = path.join(PROJECT_ROOT, 'test/contract/python/conformance.py');

/** Every check the program prints, in its order. */
const CHECKS = [
  'cluster.leader',
  'session.open (and its retry)',
  'lock.acquire tokens increase',
  'kv.write fenced write accepted',
  'kv.write stale token refused',
  'kv.write key of another lock refused',
  'kv.write unknown session refused',
  'retry answered as the first time',
  'follower answers with a leader hint',
  'pipeline equals unary',
  'session.keepalive remaining_ms within (0, ttl_ms]',
];

let cluster: LocalCluster;

beforeAll(async () => {
  execFileSync('bash', [path.join(PROJECT_ROOT, 'scripts/ensure-python-grpc.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  cluster = await LocalCluster.create();
  cluster.startAll();
});

afterAll(async () => {
  await cluster?.destroy();
});

function runProgram(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [PROGRAM, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a Python client written from lock.proto', () => {
  it('sees every gRPC promise of the README kept, over TLS against a 3-node cluster', async () => {
    const ca = path.join(cluster.certsDir!, 'ca.pem');
    const run = await runProgram(['--proto-dir', path.join(PROJECT_ROOT, 'proto'), '--cacert', ca, ...cluster.endpoints]);
    const report = `${run.stdout}\n${run.stderr}`;
    const lines = run.stdout.trim().split('\n');
    expect(lines.map((l) => l.replace(/^(ok|FAIL) +([^:]+):.*$/, '$1 $2')), report).toEqual([...CHECKS.map((c) => `ok ${c}`), lines.at(-1)]);
    expect(lines.at(-1), report).toBe(`${CHECKS.length} checks, 0 failed`);
    expect(run.code, report).toBe(0);
  });
});
