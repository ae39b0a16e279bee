// `fencelock elect` (issue 34) as real processes against a real 3-node cluster: CMD runs as leader with the
// leadership's token and resigns when it exits; CMD is stopped and the exit code is 4 when the leadership is
// lost; `elect --observe` prints each leadership and vacancy, one line each, until Ctrl-C.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { ChildProcesses, CLI, type Running } from './childProcesses';
import { clusterWithLeader } from './clusterWithLeader';
import { eventually, LocalCluster } from './harness';

let cluster: LocalCluster;
let client: FenceLockClient;
const children = new ChildProcesses();

const cli = (args: string[]): Running => children.cli(cluster.endpoints, args);

beforeAll(async () => {
  ({ cluster, client } = await clusterWithLeader({}, 40_000));
}, 60_000);

afterEach(() => children.killAll());

afterAll(async () => {
  await client?.close();
  await cluster?.destroy();
});

describe('fencelock elect', () => {
  it('runs CMD as leader with the fencing token, so its kv put is fenced, and resigns when CMD exits', async () => {
    const script = `echo "token=$FENCELOCK_TOKEN election=$FENCELOCK_ELECTION" && node ${JSON.stringify(CLI)} kv put cli/elect/work "$FENCELOCK_TOKEN" && exit 3`;
    const run = cli(['elect', 'cli/elect', 'node-a', '--ttl', '4000', '--', 'sh', '-c', script]);
    expect(await run.exited, run.err()).toBe(3); // CMD's own code
    const m = /token=(\d+) election=cli\/elect/.exec(run.out());
    expect(m, run.out()).not.toBeNull();
    const token = BigInt(m![1]!);
    expect(await client.get('cli/elect')).toMatchObject({ found: true, token });
    expect(Buffer.from((await client.get('cli/elect')).value).toString()).toBe('node-a');
    expect((await client.get('cli/elect/work')).token).toBe(token);
    expect((await client.describe('cli/elect')).held).toBe(false); // resigned
    expect(await client.election('cli/elect').leader()).toBeNull();
  });

  it('stops CMD and exits 4 when the leadership is lost', async () => {
    const run = cli(['elect', 'cli/lost', 'node-b', '--ttl', '4000', '--grace', '500', '--', 'sleep', '60']);
    const d = await eventually(async () => {
      const desc = await client.describe('cli/lost');
      return desc.held && (await client.election('cli/lost').leader()) !== null ? desc : undefined;
    }, 20_000, 'the CLI leads');
    await client.auth.sessionRevoke(d.holderSession);
    expect(await run.exited).toBe(4);
    expect(run.err()).toMatch(/leadership of election "cli\/lost" \(token \d+\) lost/);
  });

  it('--observe prints each leadership and each vacancy, one line each, until SIGINT', async () => {
    const obs = cli(['elect', '--observe', 'cli/observe']);
    const a = await client.election('cli/observe', { ttlMs: 4000 }).campaign('first');
    await eventually(() => (obs.out().includes(`token ${a.token}`) ? true : undefined), 15_000, 'the first leadership printed');
    await a.resign();
    await eventually(() => (obs.out().includes(`leadership ${a.token} ended`) ? true : undefined), 15_000, 'the vacancy printed');
    const b = await client.election('cli/observe', { ttlMs: 4000 }).campaign('second');
    await eventually(() => (obs.out().includes(`token ${b.token}`) ? true : undefined), 15_000, 'the second leadership printed');
    obs.child.kill('SIGINT');
    expect(await obs.exited).toBe(0);
    expect(obs.out().trimEnd().split('\n')).toEqual([
      `election "cli/observe": token ${a.token}, value "first", holder ${a.holder}`,
      `election "cli/observe": no leader (leadership ${a.token} ended)`,
      `election "cli/observe": token ${b.token}, value "second", holder ${b.holder}`,
    ]);
    await b.resign();
  });

  it('refuses elect without CMD, and --observe with a value', async () => {
    const noCmd = cli(['elect', 'cli/usage', 'v']);
    expect(await noCmd.exited).toBe(1);
    expect(noCmd.err()).toMatch(/NAME VALUE -- CMD/);
    const both = cli(['elect', '--observe', 'cli/usage', 'v']);
    expect(await both.exited).toBe(1);
    expect(both.err()).toMatch(/takes only NAME/);
  });
});
