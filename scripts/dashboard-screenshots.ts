// Screenshots of the web dashboard's main pages for docs/ and the README (docs/dashboard.md): starts a local
// 3-node cluster with TLS, auth and the HTTP listener on (the integration tests' harness), holds a few locks
// with waiters, hands one lock over twice (a release and an admin revoke) while its page watches, and saves
// PNGs of the members, locks, lock and sessions pages in docs/images/ with headless Chromium.
//   npm run build && node dist/scripts/dashboard-screenshots.js [--out docs/images]
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'puppeteer-core';
import type { Session } from '../src/client';
import { launchChromium } from '../test/browser/chromium';
import { eventually } from '../test/integration/harness';
import { httpCluster } from '../test/integration/httpGateway';

const ROOT = path.resolve(__dirname, '../..');

function outDir(): string {
  const at = process.argv.indexOf('--out');
  return path.resolve(at > 0 && process.argv[at + 1] ? process.argv[at + 1]! : path.join(ROOT, 'docs', 'images'));
}

/** Shows `hash`, waits until `ready` (a page-side expression) holds, and saves the page as `name`.png. */
async function shoot(page: Page, hash: string, ready: string, file: string): Promise<void> {
  await page.evaluate(`window.location.hash = ${JSON.stringify(hash)}`);
  await page.waitForFunction(ready, { timeout: 30_000 });
  await page.screenshot({ path: file as `${string}.png`, fullPage: true });
  console.log(`saved ${path.relative(ROOT, file)}`);
}

async function main(): Promise<void> {
  const out = outDir();
  mkdirSync(out, { recursive: true });
  const k = await httpCluster({ authAdmin: 'test' });
  const sessions: Session[] = [];
  const open = async (name: string): Promise<Session> => {
    const s = await k.client.openSession({ ttlMs: 60_000, name });
    sessions.push(s);
    return s;
  };
  const browser = await launchChromium(k.cluster.certsDir!, k.cluster.nodes.map((n) => n.id));
  try {
    await eventually(async () => ((await k.client.auth.whoAmI()).authEnabled ? true : undefined), 30_000, 'auth on');
    const token = (await k.client.auth.tokenIssue('test')).token;
    const [builder, deployer, billing, etl, reporter] = await Promise.all(['ci-runner-7', 'deploy-bot', 'billing-worker', 'etl-orders', 'report-cron'].map(open));
    await builder!.acquire('jobs/nightly-build', { waitTimeoutMs: 0 });
    const billingLock = await billing!.acquire('billing/invoices', { waitTimeoutMs: 0 });
    await etl!.acquire('etl/orders/2026-12', { waitTimeoutMs: 0 });
    void reporter!.acquire('billing/invoices', { waitTimeoutMs: 120_000 }).catch(() => undefined);
    void deployer!.acquire('jobs/nightly-build', { waitTimeoutMs: 120_000 }).catch(() => undefined);
    await eventually(async () => ((await k.client.describe('billing/invoices')).waiters.length === 1 ? true : undefined), 20_000, 'a waiter');

    const page = await browser.newPage();
    await page.setViewport({ width: 1200, height: 640 });
    await page.goto(`https://${await k.leaderHttp()}/#/lock/${encodeURIComponent('billing/invoices')}`, { waitUntil: 'load' });
    await page.type('#token', token);
    await page.click('#use-token');
    await page.waitForFunction("document.querySelector('#stream-state')?.textContent === 'live'", { timeout: 30_000 });
    // Two hand-overs while the lock's page watches: a release to the waiter, then an admin revoke.
    const standby = await open('billing-standby');
    const standbyWaits = standby.acquire('billing/invoices', { waitTimeoutMs: 120_000 });
    await eventually(async () => ((await k.client.describe('billing/invoices')).waiters.length === 2 ? true : undefined), 20_000, 'two waiters');
    await billingLock.release();
    await eventually(async () => ((await k.client.describe('billing/invoices')).waiters.length === 1 ? true : undefined), 20_000, 'the hand-over');
    await k.client.revokeLock('billing/invoices', { reason: 'stuck on a dead database connection' });
    await standbyWaits;

    await shoot(page, `#/lock/${encodeURIComponent('billing/invoices')}`, "document.querySelectorAll('#timeline tbody tr').length === 3", path.join(out, 'dashboard-lock.png'));
    await shoot(page, '#/locks', "document.querySelectorAll('#locks tbody tr').length === 3", path.join(out, 'dashboard-locks.png'));
    await shoot(page, '#/members', "document.querySelectorAll('#members tbody tr').length === 3", path.join(out, 'dashboard-members.png'));
    await shoot(page, '#/sessions', "document.querySelectorAll('#sessions tbody tr').length === 6", path.join(out, 'dashboard-sessions.png'));
  } finally {
    await browser.close();
    for (const s of sessions) await s.close().catch(() => undefined);
    await k.client.close();
    await k.cluster.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
