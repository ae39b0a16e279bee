// Election stress (issue 34): 200 leaderships over two campaigner processes that mostly resign, sometimes
// crash (SIGKILL: the session expires) or freeze past their TTL and wake up deposed. Each leader does a fenced
// write with its token; test/checker/electionHistory.ts then checks that one leader acted per token, that the
// store never accepted an older token after a newer one, and that every observer saw leaderships in token order.
//
// The run is counted in leaderships, not time: every crash and freeze costs a session TTL (the cluster minimum),
// every resign a few log entries, so crashes and freezes are few and the run's length barely depends on load.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, type Leader } from '../../src/client';
import { MIN_SESSION_TTL_MS } from '../../src/protocol/limits';
import { checkElection, type AcceptedWrite, type Leadership } from '../checker/electionHistory';
import { Campaigner, type WorkerLine } from './campaigner';
import { clusterWithLeader } from './clusterWithLeader';
import { LocalCluster } from './harness';

const ELECTION = 'stress/leader';
const LEADERSHIPS = 200;
/** Shorter TTLs are refused by the cluster (a campaign with one never leads). */
const TTL_MS = MIN_SESSION_TTL_MS;
/** Once every CRASH_EVERY leaderships, one ends by SIGKILL; once every FREEZE_EVERY, by a freeze past the TTL. */
const CRASH_EVERY = 50;
const FREEZE_EVERY = 100;
/** A campaigner waits in line at most through a crash or a freeze: a few TTLs, under load. */
const LINE_MS = 12 * TTL_MS;

let cluster: LocalCluster;
let client: FenceLockClient;

beforeAll(async () => {
  ({ cluster, client } = await clusterWithLeader({}, 40_000));
}, 60_000);

afterAll(async () => {
  await Campaigner.stopAll();
  await client?.close();
  await cluster?.destroy();
});

/**
 * How leaderships that wrote end: most resign; the first to reach each next crash (freeze) point is killed
 * (frozen, then woken deposed). Points, not exact counts, so that a refused leadership cannot skip one.
 */
class Endings {
  crashes = 0;
  freezes = 0;

  next(answered: number): 'resign' | 'crash' | 'freeze' {
    if (answered >= LEADERSHIPS) return 'resign';
    if (answered >= (this.freezes + 0.5) * FREEZE_EVERY) {
      this.freezes++;
      return 'freeze';
    }
    if (answered >= (this.crashes + 1) * CRASH_EVERY - 2) {
      this.crashes++;
      return 'crash';
    }
    return 'resign';
  }
}

describe('election stress', () => {
  it(`${LEADERSHIPS} leaderships with resigns, crashes and deposed leaders: one leader per token, tokens never go back`, async () => {
    const started = Date.now();
    const config = { endpoints: cluster.endpoints, election: ELECTION, ttlMs: TTL_MS };
    let spawned = 0;
    const spawnCampaigner = (): Campaigner => new Campaigner(`c${spawned++}`, config);

    // Two observers, watching through different nodes.
    const observed: Leader[][] = [[], []];
    const observerClients = [1, 2].map((i) => new FenceLockClient({ endpoints: [...cluster.endpoints.slice(i), ...cluster.endpoints.slice(0, i)] }));
    // An observer that stops for good says so here (a throw in its callback would only be logged).
    const observerErrors: string[] = [];
    const observers = observerClients.map((c, i) => c.election(ELECTION).observe((l) => observed[i]!.push(l), { onError: (err) => observerErrors.push(`observer ${i}: ${err.message}`) }));

    const leaderships: Leadership[] = [];
    const leaderOf = new Map<bigint, string>();
    const accepted: AcceptedWrite[] = [];
    /** Leaderships whose first write got its answer (accepted, or refused: the session ran out first). */
    let answered = 0;
    const staleRefused: bigint[] = [];
    const endings = new Endings();
    let frozen: { c: Campaigner; token: bigint } | undefined;
    let woken: bigint | undefined;

    const pending = new Map<Campaigner, Promise<{ c: Campaigner; line: WorkerLine }>>();
    const arm = (c: Campaigner): void => void pending.set(c, c.next(LINE_MS).then((line) => ({ c, line })));
    for (const c of [spawnCampaigner(), spawnCampaigner()]) arm(c);

    while (answered < LEADERSHIPS || frozen !== undefined || woken !== undefined) {
      const { c, line } = await Promise.race(pending.values());
      pending.delete(c);
      const token = BigInt(line.token ?? '0');
      if (line.k === 'leader') {
        leaderships.push({ token, by: c.id });
        leaderOf.set(token, c.id);
        c.send('write');
      } else if (line.k === 'wrote') {
        answered++;
        accepted.push({ token, index: BigInt(line.index!), by: c.id });
        if (answered % 50 === 0) process.stdout.write(`[election stress] ${answered} leaderships after ${Date.now() - started} ms\n`);
        if (frozen) {
          // A newer leader has acted: wake the frozen one, whose write under its old token must be refused.
          frozen.c.signal('SIGCONT');
          frozen.c.send('write');
          woken = frozen.token;
          arm(frozen.c);
          frozen = undefined;
        }
        const ending = woken === undefined ? endings.next(answered) : 'resign';
        if (ending === 'freeze') {
          frozen = { c, token };
          c.signal('SIGSTOP');
          continue; // not re-armed until it wakes: a stopped process says nothing
        }
        if (ending === 'crash') {
          await c.kill();
          arm(spawnCampaigner());
          continue;
        }
        c.send('resign');
      } else if (line.k === 'refused') {
        expect(leaderOf.get(token)).toBe(c.id);
        if (token === woken) {
          staleRefused.push(token);
          woken = undefined;
        } else {
          answered++; // its session ran out before its first write (a loaded machine): refused, as it must be
        }
        c.send('resign');
      }
      arm(c);
    }
    for (const o of observers) o.cancel();
    await Campaigner.stopAll();
    await Promise.all(observerClients.map((c) => c.close()));

    expect(checkElection({ leaderships, accepted, observed })).toEqual([]);
    expect(observerErrors).toEqual([]);
    expect({ crashes: endings.crashes, freezes: endings.freezes }).toEqual({ crashes: LEADERSHIPS / CRASH_EVERY, freezes: LEADERSHIPS / FREEZE_EVERY });
    expect(staleRefused.length).toBe(endings.freezes);
    // Most leaderships wrote (a first write is refused only when its session ran out first, on a loaded machine).
    expect(accepted.length).toBeGreaterThan(LEADERSHIPS / 2);
    // The store holds the newest accepted write.
    const newest = accepted.reduce((m, w) => (w.token > m ? w.token : m), 0n);
    expect((await client.get(`${ELECTION}/work`)).token).toBe(newest);
    for (const seen of observed) expect(seen.length).toBeGreaterThan(0);
    process.stdout.write(
      `[election stress] ${leaderships.length} leaderships, ${accepted.length} writes accepted, ${staleRefused.length} stale refused, ${endings.crashes} crashes; observers saw ${observed.map((o) => o.length).join(' and ')}; ${Date.now() - started} ms\n`,
    );
  }, 180_000);
});
