// The web dashboard (issue 35) in headless Chromium against a real 3-node cluster with TLS and auth on: the
// page loads under its Content-Security-Policy, shows the leader and a held lock with its token, follows a
// hand-over without a reload (locks page and the lock's token timeline), and a user with the lock permission
// on app/ only does not see the locks under secret/; names show as text; a follower's page sees a leader
// change live. Every wait is for a DOM condition, never a fixed time.
import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import type { Session } from '../../src/client';
import { DASHBOARD_CSP } from '../../src/node/http/dashboardAssets';
import { eventually } from '../integration/harness';
import { httpCluster, tlsOf, type HttpCluster } from '../integration/httpGateway';
import { launchChromium } from './chromium';

let k: HttpCluster;
let browser: Browser;
let adminToken: string;
let tomToken: string;
let origin: string;
const sessions: Session[] = [];
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  k = await httpCluster({ authAdmin: 'test' });
  await eventually(async () => ((await k.client.auth.whoAmI()).authEnabled ? true : undefined), 30_000, 'auth on');
  await k.client.auth.roleAdd('app');
  await k.client.auth.roleGrantPermission('app', 'lock', 'app/');
  await k.client.auth.userAdd('tom');
  await k.client.auth.userGrantRole('tom', 'app');
  tomToken = (await k.client.auth.tokenIssue('tom')).token;
  adminToken = (await k.client.auth.tokenIssue('test')).token;
  origin = `https://${await k.leaderHttp()}`;
  browser = await launchChromium(k.cluster.certsDir!, k.cluster.nodes.map((n) => n.id));
}, 120_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  for (const s of sessions) await s.close().catch(() => undefined);
  await k?.client.close();
  await k?.cluster.destroy();
});

async function openSession(name: string): Promise<Session> {
  const s = await k.client.openSession({ ttlMs: 60_000, name });
  sessions.push(s);
  return s;
}

// Page-side code goes as strings: this project's TypeScript has no DOM types (lib ES2022 only).
const q = (selector: string): string => `document.querySelector(${JSON.stringify(selector)})`;

/** Waits until a page-side expression is true. */
async function waitUntil(page: Page, expression: string): Promise<void> {
  await page.waitForFunction(expression, { timeout: 30_000 });
}

/** Waits until the element's text is `expected`. */
async function waitText(page: Page, selector: string, expected: string): Promise<void> {
  await waitUntil(page, `${q(selector)}?.textContent === ${JSON.stringify(expected)}`);
}

/** A page of its own browser context (its own sessionStorage), signed in with `token`, failing on any page error. */
async function signedIn(token: string, hash: string): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.createBrowserContext();
  contexts.push(context);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  // A refused fetch is logged by the browser itself: those are judged by their answers below.
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) errors.push(msg.text());
  });
  // Every call made with the token must succeed (the unauthenticated ones before it are refused 401).
  page.on('response', (res) => {
    if (res.status() >= 400 && res.request().headers().authorization !== undefined) errors.push(`${res.status()} ${res.url()}`);
  });
  await page.goto(`${origin}/${hash}`, { waitUntil: 'load' });
  // Without credentials the page asks for them; then the token is entered.
  await waitUntil(page, `${q('#problem:not([hidden])')}?.textContent.startsWith('Not signed in')`);
  await page.type('#token', token);
  await page.click('#use-token');
  await waitUntil(page, `${q('#whoami')}.textContent.endsWith('(token)')`);
  return { page, errors };
}

const textOf = (page: Page, selector: string): Promise<string | null> => page.$eval(selector, (e) => e.textContent).catch(() => null);

const goTo = (page: Page, hash: string): Promise<unknown> => page.evaluate(`window.location.hash = ${JSON.stringify(hash)}`);
/** A marker on the window: still there afterwards means the page was never reloaded. */
const setMarker = (page: Page): Promise<unknown> => page.evaluate('window.marker = 1');
const markerOf = (page: Page): Promise<unknown> => page.evaluate('window.marker');

function rawGet(route: string, method = 'GET'): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: hostname, port: Number(port), path: route, method, ...tlsOf(k.cluster.certsDir!) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the web dashboard in headless Chromium', () => {
  it('serves its files under a strict Content-Security-Policy, without credentials, and nothing else new', async () => {
    const index = await rawGet('/');
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(index.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    expect(index.headers['content-security-policy']).toContain("script-src 'self'");
    expect(index.text).not.toMatch(/<script>|<style>|https?:\/\//); // no inline script or style, no external asset
    const script = await rawGet('/dashboard/app.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    // The data stays behind the gateway's authentication.
    expect((await rawGet('/v1/locks')).status).toBe(401);
    expect((await rawGet('/dashboard/secrets.json')).status).toBe(404);
    const head = await rawGet('/dashboard/style.css', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    const posted = await rawGet('/', 'POST');
    expect(posted.status).toBe(405);
    expect(posted.headers.allow).toBe('GET, HEAD');
  });

  it('shows lock and client names as text, never as HTML (regression: names are anyone\'s input)', async () => {
    const name = 'app/<b id="injected-lock">x</b><img src=x onerror="window.pwned=1">';
    const mallory = await k.client.openSession({ ttlMs: 60_000, name: '<b id="injected-client">mallory</b>' });
    sessions.push(mallory);
    const held = await mallory.acquire(name, { waitTimeoutMs: 0 });
    const { page, errors } = await signedIn(adminToken, '#/locks');
    const row = `[...document.querySelectorAll('#locks tbody tr')].find((tr) => tr.dataset.lock === ${JSON.stringify(name)})`;
    await waitUntil(page, `${row}?.querySelector('.token').textContent === ${JSON.stringify(held.token.toString())}`);
    expect(await page.evaluate(`${row}.querySelector('a').textContent`)).toBe(name);
    expect(await page.evaluate(`${row}.querySelector('.holder').textContent.startsWith('<b id="injected-client">mallory</b>')`)).toBe(true);
    await goTo(page, `#/lock/${encodeURIComponent(name)}`);
    await waitText(page, '#current-token', held.token.toString());
    expect(await textOf(page, '#lock-name')).toBe(name);
    expect(await page.$('#injected-lock, #injected-client')).toBeNull();
    expect(await page.evaluate('window.pwned')).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it('shows the leader, the members, and a held lock with its token; a hand-over appears without a reload', async () => {
    const alice = await openSession('alice');
    const bob = await openSession('bob');
    const first = await alice.acquire('app/build', { waitTimeoutMs: 0 });
    const { page, errors } = await signedIn(adminToken, '#/members');
    const leader = (await k.client.status()).leader;
    await waitText(page, '#leader', leader);
    await waitUntil(page, "document.querySelectorAll('#members tbody tr').length === 3");
    expect(await textOf(page, `#members tr[data-member="${leader}"] .role`)).toBe('leader');
    expect(await textOf(page, '#whoami')).toBe('test (token)');

    await goTo(page, '#/locks');
    await waitText(page, 'tr[data-lock="app/build"] .token', first.token.toString());
    expect(await textOf(page, 'tr[data-lock="app/build"] .holder')).toContain('alice');
    await setMarker(page);

    const bobWaits = bob.acquire('app/build', { waitTimeoutMs: 30_000 });
    await waitUntil(page, `${q('tr[data-lock="app/build"] .waiters')}?.textContent.includes(${JSON.stringify(bob.publicId)})`);
    await first.release();
    const second = await bobWaits;
    expect(second.token).toBeGreaterThan(first.token);
    await waitText(page, 'tr[data-lock="app/build"] .token', second.token.toString());
    expect(await textOf(page, 'tr[data-lock="app/build"] .holder')).toContain('bob');
    expect(await markerOf(page)).toBe(1);
    expect(errors).toEqual([]);
  });

  it("a lock's page draws its token timeline from the event stream: the ended grant fenced, the new one current", async () => {
    const carol = await openSession('carol');
    const dave = await openSession('dave');
    const first = await carol.acquire('app/deploy', { waitTimeoutMs: 0 });
    const { page, errors } = await signedIn(adminToken, `#/lock/${encodeURIComponent('app/deploy')}`);
    await waitText(page, '#current-token', first.token.toString());
    await waitText(page, '#stream-state', 'live');
    await setMarker(page);
    const daveWaits = dave.acquire('app/deploy', { waitTimeoutMs: 30_000 });
    await eventually(async () => ((await k.client.describe('app/deploy')).waiters.length === 1 ? true : undefined), 20_000, 'dave queued');
    await first.release();
    const second = await daveWaits;
    await waitText(page, `#timeline tr[data-token="${second.token}"] .mark`, 'current');
    await waitText(page, `#timeline tr[data-token="${first.token}"] .mark`, 'fenced: writes refused');
    await waitText(page, '#current-token', second.token.toString());
    expect(await textOf(page, '#holder')).toContain('dave');
    expect(await markerOf(page)).toBe(1);
    expect(errors).toEqual([]);
  });

  it('a user with the lock permission on app/ only sees the app/ locks, not those under secret/', async () => {
    const admin = await openSession('admin-job');
    await admin.acquire('secret/plan', { waitTimeoutMs: 0 });
    const erin = await openSession('erin');
    const visible = await erin.acquire('app/visible', { waitTimeoutMs: 0 });

    // The admin's page lists both: the secret lock is there to be hidden.
    const asAdmin = await signedIn(adminToken, '#/locks');
    await asAdmin.page.waitForSelector('tr[data-lock="secret/plan"]', { timeout: 30_000 });

    const { page, errors } = await signedIn(tomToken, '#/locks');
    await waitText(page, '#whoami', 'tom (token)');
    await waitText(page, 'tr[data-lock="app/visible"] .token', visible.token.toString());
    expect(await page.$('tr[data-lock="secret/plan"]')).toBeNull();
    expect(await textOf(page, '#view')).not.toContain('secret/');

    // The lock's own page is refused, and says so.
    await goTo(page, `#/lock/${encodeURIComponent('secret/plan')}`);
    await waitUntil(page, `${q('#problem:not([hidden])')}?.textContent.startsWith('Not allowed')`);
    expect(await textOf(page, '#holder')).toBeNull();
    // Refused, and asked again every few seconds: nothing else went wrong.
    expect(errors.length).toBeGreaterThan(0);
    expect(new Set(errors)).toEqual(new Set([`403 ${origin}/v1/locks/describe?lock=secret%2Fplan`]));
  });

  // Last: it kills the leader.
  it("a follower's members page names the new leader after the leader dies, and lists the change", async () => {
    const before = (await k.client.status()).leader;
    const followerId = k.cluster.nodes.map((n) => n.id).find((id) => id !== before)!;
    const context = await browser.createBrowserContext();
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`https://${k.http.get(followerId)}/#/members`, { waitUntil: 'load' });
    await page.type('#token', adminToken);
    await page.click('#use-token');
    await waitText(page, '#leader', before);
    expect(await textOf(page, `#members tr[data-member="${followerId}"] .role`)).toBe('follower');
    await waitUntil(page, "document.querySelectorAll('#leader-changes li').length === 1");

    await k.cluster.kill(before);
    await waitUntil(page, `!['${before}', 'none'].includes(${q('#leader')}.textContent)`);
    const after = await textOf(page, '#leader');
    await waitUntil(page, "document.querySelectorAll('#leader-changes li').length >= 2");
    expect(await textOf(page, '#leader-changes li:first-child')).toContain(`leader ${after}`);
    expect(await textOf(page, '#leader-changes li:last-child')).toContain(`leader ${before} (when the page opened)`);
  });
});
