// Issue 29: @fencelock/fencing installs and runs outside this repository. `npm pack` builds packages/fencing
// (its prepack script), the tarball goes into a fresh application with `pg` and PGlite, and the README's
// examples run there: the CommonJS one against the real PostgreSQL server of the global setup, the ESM one on
// PGlite. The installed `fencelock-proxy` bin answers --help, and `tsc` resolves the types by package name.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PROJECT_ROOT, runNode } from '../integration/harness';

const PACKAGE_DIR = path.join(PROJECT_ROOT, 'packages', 'fencing');
const TSC = path.join(PROJECT_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** The code block that follows `<!-- example:NAME -->` in a README. */
function readmeExample(file: string, name: string): string {
  const readme = fs.readFileSync(file, 'utf8');
  const m = new RegExp(`<!-- example:${name} -->\\n\`\`\`js\\n([\\s\\S]*?)\`\`\``).exec(readme);
  if (!m?.[1]) throw new Error(`${file} has no example:${name} block`);
  return m[1];
}

function npm(args: string[], cwd: string): string {
  return execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 });
}

/** The version of a package installed in the repository (the application installs the same, from the cache). */
function installedVersion(name: string): string {
  return (JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

describe('the @fencelock/fencing package', () => {
  let tmp: string;
  let app: string;
  let packed: { files: Array<{ path: string }>; filename: string };
  const schema = `pkg_${process.pid}`;

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fencelock-fencing-pkg-'));
    [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', tmp], PACKAGE_DIR)) as [typeof packed];
    app = path.join(tmp, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    // The registry's metadata may come from the npm cache; the package's code comes from the tarball only.
    npm(
      ['install', '--prefer-offline', '--no-audit', '--no-fund', path.join(tmp, packed.filename), `pg@${installedVersion('pg')}`, `@electric-sql/pglite@${installedVersion('@electric-sql/pglite')}`],
      app,
    );
    const admin = new pg.Client({ connectionString: inject('postgresUrl') });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
    await admin.end();
  }, 240_000);

  afterAll(async () => {
    const admin = new pg.Client({ connectionString: inject('postgresUrl') });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('ships the compiled helpers, their declarations, the ESM entry and the bin: no tests, no server, no build script it cannot run', () => {
    const files = packed.files.map((f) => f.path);
    for (const f of ['dist/cjs/fencing/index.js', 'dist/cjs/fencing/index.d.ts', 'dist/esm/index.mjs', 'dist/cjs/fencing/proxy/main.js', 'README.md', 'package.json']) {
      expect(files).toContain(f);
    }
    const foreign = files.filter(
      (f) => !/^(dist\/cjs\/fencing\/([a-z]+\/)?[A-Za-z]+\.(js|d\.ts)|dist\/cjs\/protocol\/(fencingHeaders|traceContext)\.(js|d\.ts)|dist\/cjs\/client\/uint64\.(js|d\.ts)|dist\/esm\/index\.mjs|package\.json|README\.md)$/.test(f),
    );
    expect(foreign).toEqual([]);
    const manifest = JSON.parse(fs.readFileSync(path.join(app, 'node_modules', '@fencelock', 'fencing', 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
      peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    };
    // An install of the tarball runs `prepare`: one whose script is not in the tarball would fail.
    expect(manifest.scripts?.prepare).toBeUndefined();
    expect(manifest.peerDependenciesMeta?.pg?.optional).toBe(true);
  });

  it('installs without LevelDB, gRPC, pino or any other server dependency', () => {
    const installed = fs.readdirSync(path.join(app, 'node_modules'));
    expect(installed).toContain('@fencelock');
    expect(fs.readdirSync(path.join(app, 'node_modules', '@fencelock'))).toEqual(['fencing']);
    for (const server of ['level', 'classic-level', 'pino', 'prom-client', 'node-forge', 'grpc-health-check', '@grpc', 'protobufjs']) {
      expect(installed, server).not.toContain(server);
    }
  });

  it("the README's examples are the package README's, and run from the installed package: CommonJS on PostgreSQL, ESM on PGlite", async () => {
    const root = path.join(PROJECT_ROOT, 'README.md');
    const own = path.join(PACKAGE_DIR, 'README.md');
    for (const name of ['fencing-cjs', 'fencing-esm']) expect(readmeExample(own, name)).toBe(readmeExample(root, name));
    fs.writeFileSync(path.join(app, 'app.cjs'), readmeExample(root, 'fencing-cjs'));
    fs.writeFileSync(path.join(app, 'app.mjs'), readmeExample(root, 'fencing-esm'));

    const url = `${inject('postgresUrl')}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const cjs = await runNode(['app.cjs'], { cwd: app, env: { DATABASE_URL: url }, timeoutMs: 60_000 });
    expect(cjs.code, cjs.stderr).toBe(0);
    expect(cjs.stdout.trim()).toBe('APPLIED at fence 41; token 40 then: STALE, watermark 41');
    const check = new pg.Client({ connectionString: url });
    await check.connect();
    expect((await check.query('SELECT balance, fence::text AS fence FROM account')).rows).toEqual([{ balance: 70, fence: '41' }]);
    await check.end();

    const esm = await runNode(['app.mjs'], { cwd: app, timeoutMs: 60_000 });
    expect(esm.code, esm.stderr).toBe(0);
    expect(esm.stdout.trim()).toBe('delete APPLIED; re-create under token 30: STALE, watermark 31');
    process.stdout.write(`[package] from ${packed.filename}: ${cjs.stdout.trim()} | ${esm.stdout.trim()}\n`);
  });

  it('the installed fencelock-proxy bin answers --help with the flags of `fencelock proxy`', async () => {
    const bin = path.join(app, 'node_modules', '.bin', 'fencelock-proxy');
    const help = execFileSync(bin, ['--help'], { cwd: app, encoding: 'utf8' });
    expect(help).toMatch(/^Usage: fencelock-proxy \[options\]/);
    const flags = (text: string): string[] => [...text.matchAll(/^\s+(--[a-z-]+)/gm)].map((m) => m[1]!).filter((f) => f !== '--json' && f !== '--help');
    const cli = await runNode([path.join(PROJECT_ROOT, 'dist', 'src', 'cli', 'main.js'), 'proxy', '--help'], { timeoutMs: 30_000 });
    // --endpoints is the CLI's global flag; the bin, which has no globals, declares it itself.
    expect(help).toMatch(/^\s+--endpoints <list>/m);
    expect(flags(help).filter((f) => f !== '--endpoints')).toEqual(flags(cli.stdout));
    expect(flags(help)).toEqual(expect.arrayContaining(['--target', '--state', '--listen', '--resource-segments', '--resource-header']));
    let usage = '';
    try {
      execFileSync(bin, ['--target', 'http://127.0.0.1:9', '--state', path.join(tmp, 'p.log'), '--listen', 'nowhere'], { cwd: app, encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      usage = `${(err as { status: number }).status} ${String((err as { stderr: string }).stderr)}`;
    }
    expect(usage).toMatch(/^1 fencelock-proxy: --listen: "nowhere" is not host:port/);
    // Claims are checked by default: without a cluster, or without the client package to ask it, it says so and does not start.
    const refusal = (extra: string[]): string => {
      try {
        execFileSync(bin, ['--target', 'http://127.0.0.1:9', '--state', path.join(tmp, 'p.log'), '--listen', '127.0.0.1:0', ...extra], { cwd: app, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, FENCELOCK_ENDPOINTS: '' } });
        return 'started';
      } catch (err) {
        return `${(err as { status: number }).status} ${String((err as { stderr: string }).stderr)}`;
      }
    };
    expect(refusal([])).toMatch(/^1 fencelock-proxy: checking claims needs the cluster: give --endpoints .*or --unchecked-claims/);
    expect(refusal(['--endpoints', '127.0.0.1:9'])).toMatch(/^1 fencelock-proxy: checking claims needs @fencelock\/client installed beside @fencelock\/fencing .*or --unchecked-claims/);
  });

  it('resolves its types by package name, without pg installed for types: a correct use type-checks, a wrong one is a type error', () => {
    const tsconfig = {
      compilerOptions: { module: 'node16', moduleResolution: 'node16', target: 'ES2022', strict: true, noEmit: true, types: ['node'], typeRoots: [path.join(PROJECT_ROOT, 'node_modules', '@types')] },
    };
    fs.writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify(tsconfig));
    const good = [
      "import { fencedUpdate, FencingClaimError, type FencedOutcome, type SqlDatabase } from '@fencelock/fencing';",
      'export async function pay(db: SqlDatabase): Promise<bigint> {',
      "  const r: FencedOutcome<Record<string, unknown>> = await fencedUpdate(db, { table: 'account', key: 1, set: { balance: 1 } }, { lock: 'a', token: 5n });",
      "  if (r.status === 'STALE') return r.watermark;",
      '  return new FencingClaimError("x").message.length > 0 ? 0n : 1n;',
      '}',
    ].join('\n');
    fs.writeFileSync(path.join(app, 'good.ts'), good);
    execFileSync(process.execPath, [TSC, '-p', app], { cwd: app, encoding: 'utf8' });
    fs.writeFileSync(path.join(app, 'bad.ts'), "import { fencedUpdate, type SqlDatabase } from '@fencelock/fencing';\nexport const p = (db: SqlDatabase) => fencedUpdate(db, { table: 'account', key: 1, set: {} }, { lock: 'a', token: 5 });\n");
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
