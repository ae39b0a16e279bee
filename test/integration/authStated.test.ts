// Running without auth is always said in the config (issue 28, "No anonymous window"): a real node process
// whose config has no `auth` section stops at start, on loopback and off it, through both entry points,
// naming the two choices; one whose config says `{ "enabled": false }` starts and warns AUTH IS OFF.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts, NODE_MAIN, PROJECT_ROOT, runNode } from './harness';

const CLI_MAIN = path.join(PROJECT_ROOT, 'dist/src/cli/main.js');
const BOTH_CHOICES =
  /field "auth" is required: "auth": \{ "enabled": true, "admin": NAME \} to turn auth on \(.*\), or "auth": \{ "enabled": false \} to serve without auth on purpose/;

describe('a node config always says whether auth is on', () => {
  let dir: string;
  let client: number;
  let peer: number;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-auth-stated-'));
    [client, peer] = await freePorts(2);
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A one-member config; `bind` is the client listener's bind host, `extra` what differs. */
  function configFile(name: string, bind: string, extra: Record<string, unknown>): { file: string; dataDir: string } {
    const dataDir = path.join(dir, name, 'data');
    const config = {
      id: 'n1',
      listen: `${bind}:${client}`,
      peerListen: `127.0.0.1:${peer}`,
      members: { n1: { client: `127.0.0.1:${client}`, peer: `127.0.0.1:${peer}` } },
      dataDir,
      ...extra,
    };
    const file = path.join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify(config));
    return { file, dataDir };
  }

  // Off loopback plaintext is refused for its own reason, so that case has TLS files (never read: the
  // config is refused before the node opens anything).
  const TLS = { tls: { ca: 'ca.pem', cert: 'n1.pem', key: 'n1-key.pem' } };
  const cases: Array<[string, string, Record<string, unknown>, string[]]> = [
    ['loopback, plaintext, main.js', '127.0.0.1', { insecure: true }, [NODE_MAIN, '--config']],
    ['loopback, plaintext, fencelock serve', '127.0.0.1', { insecure: true }, [CLI_MAIN, 'serve', '--config']],
    ['every interface, TLS, fencelock serve', '0.0.0.0', TLS, [CLI_MAIN, 'serve', '--config']],
  ];

  for (const [what, bind, extra, command] of cases) {
    it(`without an auth section the node refuses to start (${what}): exit 1, both choices named`, async () => {
      const { file, dataDir } = configFile(what.replace(/\W+/g, '-'), bind, extra);
      const r = await runNode([...command, file], { timeoutMs: 30_000 });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stderr).toContain(`${file}: field "auth"`);
      expect(r.stderr).toMatch(BOTH_CHOICES);
      // Refused before it opens storage (which would create the data directory) or listens.
      expect(existsSync(dataDir)).toBe(false);
      expect(r.stderr).not.toContain('fencelock node started');
    });
  }

  it('with "auth": { "enabled": false } the node starts, warns AUTH IS OFF, and stops cleanly', async () => {
    const { file, dataDir } = configFile('off', '127.0.0.1', { insecure: true, auth: { enabled: false } });
    const child = spawn(process.execPath, [NODE_MAIN, '--config', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let log = '';
      const started = new Promise<void>((resolve, reject) => {
        child.stderr.on('data', (d: Buffer) => {
          log += d.toString();
          if (log.includes('fencelock node started') && log.includes('AUTH IS OFF')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`node exited (${code}) before it started:\n${log}`)));
      });
      await started;
      const warning = log.split('\n').filter((l) => l.includes('AUTH IS OFF')).map((l) => JSON.parse(l) as { level: number; msg: string });
      expect(warning).toHaveLength(1);
      expect(warning[0]!.level).toBe(40); // pino's warn
      expect(warning[0]!.msg).toMatch(/^AUTH IS OFF: any caller that reaches the client listener may take, release and write any lock and key/);
      expect(existsSync(dataDir)).toBe(true);
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
