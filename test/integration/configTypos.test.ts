// A misspelt config key stops a real node process at start, quickly, with a message that names the key
// and the one probably meant; through both entry points (the node's main.js and `fencelock serve`).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts, NODE_MAIN, PROJECT_ROOT, runNode } from './harness';

const CLI_MAIN = path.join(PROJECT_ROOT, 'dist/src/cli/main.js');

describe('a misspelt config key stops the node at start', () => {
  let dir: string;
  let base: Record<string, unknown>;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-typo-'));
    const [client, peer] = await freePorts(2);
    base = {
      id: 'n1',
      listen: `127.0.0.1:${client}`,
      peerListen: `127.0.0.1:${peer}`,
      members: { n1: { client: `127.0.0.1:${client}`, peer: `127.0.0.1:${peer}` } },
      insecure: true,
      auth: { enabled: false },
      dataDir: path.join(dir, 'data'),
    };
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function configWith(name: string, extra: Record<string, unknown>): string {
    const file = path.join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify({ ...base, ...extra }));
    return file;
  }

  const typos: Array<[string, Record<string, unknown>, string]> = [
    ['electonTicks', { electonTicks: 10 }, 'electionTicks'],
    ['loglevel', { loglevel: 'debug' }, 'logLevel'],
    ['minSessionTTLMs', { minSessionTTLMs: 5_000 }, 'minSessionTtlMs'],
  ];

  for (const [typo, extra, meant] of typos) {
    it(`main.js: "${typo}" -> did you mean "${meant}"`, async () => {
      const started = Date.now();
      const r = await runNode([NODE_MAIN, '--config', configWith(typo, extra)], { timeoutMs: 30_000 });
      expect(r.code, r.stdout + r.stderr).not.toBe(0);
      expect(r.code).not.toBeNull();
      expect(r.stderr).toContain(`field "${typo}" is not a known field; did you mean "${meant}"?`);
      // It stops before it opens storage (which would create the data directory) or listens.
      expect(existsSync(base.dataDir as string)).toBe(false);
      expect(r.stderr).not.toContain('fencelock node started');
      expect(Date.now() - started).toBeLessThan(10_000);
    });
  }

  it('fencelock serve: a nested key too ("members.n1.clinet" -> "members.n1.client")', async () => {
    const members = base.members as Record<string, { client: string; peer: string }>;
    const file = configWith('nested', { members: { n1: { clinet: members.n1!.client, peer: members.n1!.peer } } });
    const r = await runNode([CLI_MAIN, 'serve', '--config', file], { timeoutMs: 30_000 });
    expect(r.code, r.stdout + r.stderr).not.toBe(0);
    expect(r.stderr).toContain('field "members.n1.clinet" is not a known field; did you mean "members.n1.client"?');
  });
});
