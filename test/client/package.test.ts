// Issue 14: the client installs and runs outside this repository. `npm pack` builds packages/client (its
// prepare script), the tarball goes into a fresh application with `npm install`, and the README's CommonJS
// and ESM examples run there against a real 3-node cluster (TLS, the harness's default), while `tsc` checks a
// TypeScript file that imports the package by name.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { eventually, LocalCluster, PROJECT_ROOT, runNode } from '../integration/harness';

const PACKAGE_DIR = path.join(PROJECT_ROOT, 'packages', 'client');
const TSC = path.join(PROJECT_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** The code block that follows `<!-- example:NAME -->` in the README. */
function readmeExample(name: string): string {
  const readme = fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
  const m = new RegExp(`<!-- example:${name} -->\\n\`\`\`js\\n([\\s\\S]*?)\`\`\``).exec(readme);
  if (!m?.[1]) throw new Error(`README.md has no example:${name} block`);
  return m[1];
}

function npm(args: string[], cwd: string): string {
  return execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 });
}

describe('the @fencelock/client package', () => {
  let tmp: string;
  let app: string;
  let packed: { files: Array<{ path: string }>; filename: string };
  let cluster: LocalCluster | undefined;
  let client: FenceLockClient | undefined;

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fencelock-pkg-'));
    [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', tmp], PACKAGE_DIR)) as [typeof packed];
    app = path.join(tmp, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    // The registry's metadata may come from the npm cache; the package's code comes from the tarball only.
    npm(['install', '--prefer-offline', '--no-audit', '--no-fund', path.join(tmp, packed.filename)], app);
    cluster = await LocalCluster.create();
    cluster.startAll();
    client = new FenceLockClient({ endpoints: cluster.endpoints, requestTimeoutMs: 1_000, totalTimeoutMs: 5_000 });
    const c = client;
    await eventually(async () => (await c.status()).leader !== '' || undefined, 20_000, 'a leader');
  }, 240_000);

  afterAll(async () => {
    await client?.close({ timeoutMs: 0 });
    await cluster?.destroy();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('ships the compiled client, its declarations, the ESM entry and lock.proto: no tests, no server', () => {
    const files = packed.files.map((f) => f.path);
    // The wire types generated from lock.proto, which the client's declarations name (the messages, and the
    // services' method definitions in generated/lock.d.ts that its method table is typed from): declarations only.
    const wireTypes = /^dist\/cjs\/protocol\/generated\/(fencelock\/v1\/[A-Za-z]+|lock)\.d\.ts$/;
    // Two files (.js, .d.ts) per module of src/client and src/protocol (about 50 of them): far fewer than the
    // project's ~900, so a pack that took in the server or the tests fails here as well as below.
    expect(files.filter((f) => !wireTypes.test(f)).length).toBeLessThan(120);
    for (const f of ['dist/cjs/client/index.js', 'dist/cjs/client/index.d.ts', 'dist/esm/index.mjs', 'proto/fencelock/v1/lock.proto', 'package.json']) {
      expect(files).toContain(f);
    }
    expect(files).toContain('dist/cjs/protocol/generated/fencelock/v1/AcquireRequest.d.ts');
    const foreign = files.filter((f) => !wireTypes.test(f) && !/^(dist\/cjs\/(client|protocol)\/[^/]+\.(js|d\.ts)|dist\/esm\/index\.mjs|proto\/fencelock\/v1\/lock\.proto|package\.json|README\.md|LICENSE)$/.test(f));
    expect(foreign).toEqual([]);
    expect(files).toContain('LICENSE');
  });

  it('builds when packed (prepack), not when installed: the installed package.json names no script it lacks', () => {
    const installed = JSON.parse(fs.readFileSync(path.join(app, 'node_modules', '@fencelock', 'client', 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
    for (const [name, script] of Object.entries(installed.scripts ?? {})) {
      const lifecycle = ['preinstall', 'install', 'postinstall', 'prepare'].includes(name);
      expect(lifecycle ? `${name}: ${script}` : '', 'a script npm runs on install').toBe('');
    }
    expect(fs.readFileSync(path.join(app, 'node_modules', '@fencelock', 'client', 'README.md'), 'utf8')).toMatch(/new FenceLockClient/);
  });

  it('installs without LevelDB, pino or any other server dependency', () => {
    const installed = fs.readdirSync(path.join(app, 'node_modules'));
    expect(installed).toContain('@fencelock');
    expect(fs.readdirSync(path.join(app, 'node_modules', '@grpc')).sort()).toEqual(['grpc-js', 'proto-loader']);
    for (const server of ['level', 'classic-level', 'pino', 'prom-client', 'commander', 'node-forge', 'pg', 'grpc-health-check']) {
      expect(installed, server).not.toContain(server);
    }
  });

  it("runs the README's CommonJS and ESM examples against a real cluster", async () => {
    fs.writeFileSync(path.join(app, 'app.cjs'), readmeExample('cjs'));
    fs.writeFileSync(path.join(app, 'app.mjs'), readmeExample('esm'));
    const env = { FENCELOCK_ENDPOINTS: cluster!.endpoints.join(',') };
    const tokens: bigint[] = [];
    for (const file of ['app.cjs', 'app.mjs']) {
      const run = await runNode([file], { cwd: app, env, timeoutMs: 30_000 });
      expect(run.code, `${file}: ${run.stderr}`).toBe(0);
      const m = /wrote invoices\/last-run under token (\d+)/.exec(run.stdout);
      expect(m, `${file} printed: ${run.stdout}`).not.toBeNull();
      process.stdout.write(`[package] node ${file} (installed from ${packed.filename}): ${run.stdout.trim()}\n`);
      tokens.push(BigInt(m![1]!));
    }
    expect(tokens[1]).toBeGreaterThan(tokens[0]!);
    const last = await client!.get('invoices/last-run');
    expect(last.found).toBe(true);
    expect(last.token).toBe(tokens[1]);
    expect((await client!.describe('invoices')).held).toBe(false); // both released (close() ran)
  });

  it('resolves its types by package name: a correct use type-checks, a wrong one is a type error', () => {
    const tsconfig = {
      compilerOptions: { module: 'node16', moduleResolution: 'node16', target: 'ES2022', strict: true, noEmit: true, types: ['node'], typeRoots: [path.join(PROJECT_ROOT, 'node_modules', '@types')] },
    };
    fs.writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify(tsconfig));
    const good = [
      "import { FenceLockClient, protocol, type FenceLockReason, type LockHandle } from '@fencelock/client';",
      "const client = new FenceLockClient({ endpoints: ['127.0.0.1:7001'] });",
      "const reason: FenceLockReason = 'PRESUMED_LOST';",
      'const max: number = protocol.MAX_CLIENT_ID_BYTES;',
      'export async function run(): Promise<bigint> {',
      "  return client.withLock('x', async (token: bigint, lock: LockHandle, signal: AbortSignal) => (signal.aborted ? 0n : token + BigInt(max + reason.length) + lock.token));",
      '}',
      'void client.close({ timeoutMs: 100 });',
    ].join('\n');
    fs.writeFileSync(path.join(app, 'good.ts'), good);
    execFileSync(process.execPath, [TSC, '-p', app], { cwd: app, encoding: 'utf8' });

    fs.writeFileSync(path.join(app, 'bad.ts'), "import { FenceLockClient } from '@fencelock/client';\nexport const n: number = new FenceLockClient({ endpoints: [] }).close({ timeoutMs: 'soon' });\n");
    let out = '';
    try {
      execFileSync(process.execPath, [TSC, '-p', app], { cwd: app, encoding: 'utf8' });
    } catch (err) {
      out = String((err as { stdout?: string }).stdout);
    }
    fs.rmSync(path.join(app, 'bad.ts'));
    expect(out).toMatch(/bad\.ts.*error TS2322/);
  });
});
