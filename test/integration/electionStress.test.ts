// Election stress (issue 34): 200 leaderships across 3 campaigner processes that resign, crash (SIGKILL: the
// session expires) or freeze past their TTL and wake up deposed. Each leader does a fenced write with its
// token; a checker then verifies that at most one leader acted at any token, that the store never accepted
// an older token after a newer one, and that every observer saw leaderships in increasing token order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, type Leader } from '../../src/client';
import { Campaigner, type WorkerLine } from './campaigner';
import { eventually, LocalCluster } from './harness';

const ELECTION = 'stress/leader';
const CYCLES = 200;
const TTL_MS = 1_500;
/** Every CRASH_EVERY-th leadership ends by SIGKILL, every PAUSE_EVERY-th by a freeze past the TTL. */
const CRASH_EVERY = 25;
const PAUSE_EVERY = 50;

export interface AcceptedWrite {
  token: bigint;
  index: bigint;
  by: string;
}

/** What went wrong in a run, as messages (none: the run is sound). */
export function checkElectionRun(leaders: Map<bigint, string>, accepted: AcceptedWrite[], observed: Leader[][]): string[] {
  const problems: string[] = [];
  let newest = 0n;
  for (const w of [...accepted].sort((a, b) => (a.index < b.index ? -1 : 1))) {
    if (w.token < newest) problems.push(`write at index ${w.index} accepted token ${w.token} after token ${newest}`);
    if (w.token > newest) newest = w.token;
    const leader = leaders.get(w.token);
    if (leader !== w.by) problems.push(`token ${w.token} was used by ${w.by}, but led by ${leader ?? 'nobody'}`);
  }
  observed.forEach((seen, i) => {
    for (let j = 1; j < seen.length; j++) {
      if (seen[j]!.token <= seen[j - 1]!.token) problems.push(`observer ${i} saw token ${seen[j]!.token} after ${seen[j - 1]!.token}`);
    }
    for (const l of seen) if (leaders.get(l.token) !== l.text) problems.push(`observer ${i} saw token ${l.token} with value ${l.text}, led by ${leaders.get(l.token) ?? 'nobody'}`);
  });
  return problems;
}

let cluster: LocalCluster;
let client: FenceLockClient;

beforeAll(async () => {
  cluster = await LocalCluster.create({ minSessionTtlMs: TTL_MS });
  cluster.startAll();
  client = new FenceLockClient({ endpoints: cluster.endpoints });
  await eventually(async () => ((await client.statusAll()).some((s) => s.ok && s.status.role === 'leader') ? true : undefined), 40_000, 'a leader');
}, 60_000);

afterAll(async () => {
  await Campaigner.stopAll();
  await client?.close();
  await cluster?.destroy();
});

describe('election stress', () => {
  it('the checker finds what is wrong', () => {
    const leaders = new Map([
      [5n, 'a'],
      [9n, 'b'],
    ]);
    const at = (token: bigint, index: bigint, by: string): AcceptedWrite => ({ token, index, by });
    const leader = (token: bigint, text: string): Leader => ({ election: 'x', token, text, value: new Uint8Array(), holder: '' });
    expect(checkElectionRun(leaders, [at(5n, 6n, 'a'), at(9n, 10n, 'b')], [[leader(5n, 'a'), leader(9n, 'b')]])).toEqual([]);
    expect(checkElectionRun(leaders, [at(9n, 10n, 'b'), at(5n, 11n, 'a')], [])).toEqual(['write at index 11 accepted token 5 after token 9']);
    expect(checkElectionRun(leaders, [at(5n, 6n, 'b')], [])).toEqual(['token 5 was used by b, but led by a']);
    expect(checkElectionRun(leaders, [], [[leader(9n, 'b'), leader(5n, 'a')]])).toEqual(['observer 0 saw token 5 after 9']);
  });

  it(`${CYCLES} leaderships with resigns, crashes and deposed leaders: one leader per token, tokens never go back`, async () => {
    const started = Date.now();
    const config = { endpoints: cluster.endpoints, election: ELECTION, ttlMs: TTL_MS };
    let spawned = 0;
    const spawnCampaigner = (): Campaigner => new Campaigner(`c${spawned++}`, config);
    const campaigners = new Set([spawnCampaigner(), spawnCampaigner(), spawnCampaigner()]);

    // Two observers, watching through different nodes.
    const observed: Leader[][] = [[], []];
    const observerClients = [0, 1].map((i) => new FenceLockClient({ endpoints: [...cluster.endpoints.slice(i + 1), ...cluster.endpoints.slice(0, i + 1)] }));
    const observers = observerClients.map((c, i) => c.election(ELECTION).observe((l) => observed[i]!.push(l), { onError: (err) => expect.fail(`observer ${i}: ${err.message}`) }));

    const leaders = new Map<bigint, string>();
    const accepted: AcceptedWrite[] = [];
    /** Leaderships whose first write got its answer (accepted, or refused if the session ran out first). The run ends after CYCLES accepted. */
    const answered = new Set<bigint>();
    const staleRefused: bigint[] = [];
    let frozen: { c: Campaigner; token: bigint } | undefined;
    let woken: bigint | undefined;
    let pauses = 0;
    let crashes = 0;
    let lastToken = 0n;

    const pending = new Map<Campaigner, Promise<{ c: Campaigner; line: WorkerLine }>>();
    const arm = (c: Campaigner): void => void pending.set(c, c.next(30_000).then((line) => ({ c, line })));
    for (const c of campaigners) arm(c);

    while (accepted.length < CYCLES || frozen !== undefined || woken !== undefined) {
      const { c, line } = await Promise.race(pending.values());
      pending.delete(c);
      const token = BigInt(line.token ?? '0');
      if (line.k === 'leader') {
        expect(leaders.has(token), `token ${token} led twice`).toBe(false);
        expect(token).toBeGreaterThan(lastToken);
        lastToken = token;
        leaders.set(token, c.id);
        c.send('write');
      } else if (line.k === 'wrote') {
        expect(answered.has(token), `a second write under token ${token} was accepted`).toBe(false);
        answered.add(token);
        accepted.push({ token, index: BigInt(line.index!), by: c.id });
        if (accepted.length % 50 === 0) process.stdout.write(`[election stress] ${accepted.length} writes after ${Date.now() - started} ms\n`);
        if (frozen && frozen.c !== c) {
          // A newer leader has acted: wake the frozen one, whose write under its old token must be refused.
          frozen.c.signal('SIGCONT');
          frozen.c.send('write');
          woken = frozen.token;
          arm(frozen.c);
          frozen = undefined;
        }
        const n = accepted.length;
        if (frozen === undefined && woken === undefined && n % PAUSE_EVERY === PAUSE_EVERY / 2 && n < CYCLES) {
          pauses++;
          frozen = { c, token };
          c.signal('SIGSTOP');
          continue; // not re-armed until it wakes: a stopped process says nothing
        }
        if (n % CRASH_EVERY === CRASH_EVERY - 2) {
          crashes++;
          campaigners.delete(c);
          await c.kill();
          const fresh = spawnCampaigner();
          campaigners.add(fresh);
          arm(fresh);
          continue;
        }
        c.send('resign');
      } else if (line.k === 'refused') {
        expect(leaders.get(token)).toBe(c.id);
        if (token === woken) {
          staleRefused.push(token);
          woken = undefined;
        } else {
          // Its session ran out before its first write (a loaded machine): refused, as it must be.
          answered.add(token);
        }
        c.send('resign');
      }
      arm(c);
    }
    for (const o of observers) o.cancel();
    await Campaigner.stopAll();
    await Promise.all(observerClients.map((c) => c.close()));

    const problems = checkElectionRun(leaders, accepted, observed);
    expect(problems).toEqual([]);
    expect(staleRefused.length).toBe(pauses);
    expect(pauses).toBe(CYCLES / PAUSE_EVERY);
    expect(crashes).toBe(CYCLES / CRASH_EVERY);
    // The last accepted write is what the store holds.
    const newest = accepted.reduce((m, w) => (w.token > m ? w.token : m), 0n);
    expect((await client.get(`${ELECTION}/work`)).token).toBe(newest);
    for (const seen of observed) expect(seen.length).toBeGreaterThan(0);
    process.stdout.write(
      `[election stress] ${leaders.size} leaderships, ${accepted.length} writes accepted, ${staleRefused.length} stale refused, ${crashes} crashes; observers saw ${observed.map((o) => o.length).join(' and ')}; ${Date.now() - started} ms\n`,
    );
  }, 300_000);
});
