// `npm run demo:sql` end to end: its own cluster on free ports, PGlite, a worker frozen by SIGSTOP. The demo
// checks each step itself and exits non-zero when one goes wrong.
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePorts, PROJECT_ROOT, runNode } from '../integration/harness';

describe('npm run demo:sql', () => {
  it("plays the timeline: A's late UPDATE is STALE with B's token, B's balance stays, A's retry is REPLAYED", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-demo-sql-'));
    try {
      const ports = await freePorts(6);
      const res = await runNode([path.join(PROJECT_ROOT, 'dist/scripts/demo-sql.js')], { env: { FENCELOCK_DEMO_DIR: dir, FENCELOCK_DEMO_PORTS: ports.join(',') }, timeoutMs: 120_000 });
      expect(res.stderr).not.toMatch(/demo:sql failed/);
      expect(res.code).toBe(0);
      const tokenA = /A holds "demo\/account-1" with fencing token (\d+)/.exec(res.stdout)?.[1];
      const tokenB = /B holds "demo\/account-1" with token (\d+)/.exec(res.stdout)?.[1];
      expect(BigInt(tokenB!)).toBeGreaterThan(BigInt(tokenA!));
      expect(res.stdout).toContain(`STALE, watermark ${tokenB} (B's token)`);
      expect(res.stdout).toContain(`account 1: balance 120, fence ${tokenB}: B's write is intact`);
      expect(res.stdout).toMatch(/REPLAYED: the stored result of the first attempt/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
