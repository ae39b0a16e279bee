// Issue 12, metrics: a quota refusal over real processes with auth on is counted by the quota it names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, FenceLockError } from '../../src/client';
import { scrape, sumOver, type Scrape } from '../support/prometheusText';
import { eventually, LocalCluster } from './harness';

let cluster: LocalCluster;
let admin: FenceLockClient;
let tenant: FenceLockClient;

function scrapeAll(): Promise<Scrape[]> {
  return Promise.all(cluster.nodes.map((n) => scrape(n.metricsAddress!)));
}


beforeAll(async () => {
  cluster = await LocalCluster.create({ authAdmin: 'test', metrics: true });
  cluster.startAll();
  // The test process's client certificate names `test`: the admin.
  admin = new FenceLockClient({ endpoints: cluster.endpoints });
  await eventually(async () => ((await admin.auth.whoAmI()).authEnabled ? true : undefined), 30_000, 'auth on');
  await admin.auth.roleAdd('one-session');
  await admin.auth.roleSetQuota('one-session', 'sessions', 1);
  await admin.auth.userAdd('eve');
  await admin.auth.userGrantRole('eve', 'one-session');
  tenant = new FenceLockClient({ endpoints: cluster.endpoints, token: (await admin.auth.tokenIssue('eve')).token });
}, 90_000);

afterAll(async () => {
  await tenant?.close();
  await admin?.close();
  await cluster?.destroy();
});

describe('quota metrics', () => {
  it('a session over the sessions quota counts once, under quota="sessions"', async () => {
    const before = await scrapeAll();
    const first = await tenant.openSession({ ttlMs: 30_000 });
    const refused = await tenant.openSession({ ttlMs: 30_000 }).then(() => undefined, (err: unknown) => err);
    expect(refused).toBeInstanceOf(FenceLockError);
    expect(refused).toMatchObject({ code: 'RESOURCE_EXHAUSTED', reason: 'QUOTA_EXCEEDED', quota: 'sessions' });
    const after = await scrapeAll();
    const delta = (name: string, labels: Record<string, string>): number => sumOver(after, name, labels) - sumOver(before, name, labels);
    expect(delta('fencelock_quota_refusals_total', { quota: 'sessions' })).toBe(1);
    expect(delta('fencelock_quota_refusals_total', {})).toBe(1);
    expect(delta('fencelock_api_refusals_total', { method: 'Session.Open', reason: 'QUOTA_EXCEEDED' })).toBe(1);
    expect(delta('fencelock_api_calls_total', { method: 'Session.Open', code: 'RESOURCE_EXHAUSTED' })).toBe(1);
    await first.close();
  });
});
