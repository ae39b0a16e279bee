// Membership changes in the core, one server at a time (dissertation §4.1-4.2): learners, promote, remove,
// the one-change-at-a-time rules, rollback of an uncommitted change, and configurations in snapshots.
import { describe, expect, it } from 'vitest';
import { ConfChangeRefusedError, EntryType, MessageType, ProposalDroppedError, RawNode, Role, type ConfChange } from '../../src/raft';
import { encodeConfigEntry } from '../../src/raft/confChange';
import { Network, drain, enc, msg, nodeWithLog } from './network';

const ABC = ['a', 'b', 'c'];
const addr = (id: string) => ({ client: `${id}:1`, peer: `${id}:2` });
/** Applied application data: no-ops and configurations left out. */
const appData = (net: Network, id: string) => net.appliedData(id).filter((d) => !d.startsWith('{'));

function change(net: Network, leader: string, c: ConfChange): number {
  const { index } = net.raw(leader).proposeConfChange(c);
  net.stabilize();
  return index;
}

/** a leads a, b, c; d joined as a learner and caught up. */
function withLearner(opts: ConstructorParameters<typeof Network>[1] = {}): Network {
  const net = new Network([...ABC], opts);
  net.elect('a');
  net.propose('a', 'x1');
  net.join('d', ABC);
  change(net, 'a', { type: 'add-learner', node: 'd', address: addr('d') });
  net.tick(2);
  return net;
}

describe('membership: learners', () => {
  it('a learner receives the whole log but votes for nobody and counts towards no quorum', () => {
    const net = withLearner();
    expect(appData(net, 'd')).toEqual(['x1']);
    expect(net.raw('a').status().config).toMatchObject({ voters: ABC, learners: ['d'] });
    expect(net.raw('d').status().config).toMatchObject({ voters: ABC, learners: ['d'] });
    // With b and c down, a and the learner d are not a quorum: nothing commits.
    net.crash('b');
    net.crash('c');
    const commit = net.raw('a').status().commit;
    net.raw('a').propose(enc('x2'));
    net.tick(3, ['a', 'd']);
    expect(net.raw('a').status().commit).toBe(commit);
    // A learner never campaigns, however long it hears nothing.
    net.crash('a');
    net.tick(50, ['d']);
    expect(net.raw('d').status().role).toBe(Role.Follower);
    expect(net.count(MessageType.PreVote, (m) => m.from === 'd')).toBe(0);
  });

  it('a learner is promoted only once caught up; then it counts towards the quorum', () => {
    const net = new Network([...ABC]);
    net.elect('a');
    net.join('d', ABC);
    change(net, 'a', { type: 'add-learner', node: 'd', address: addr('d') });
    net.tick(2);
    // d keeps answering heartbeats but receives no entries: it falls more than maxPromoteLag behind.
    net.filter = (m) => !(m.to === 'd' && m.type === MessageType.App);
    for (let i = 0; i < 1_010; i++) net.raw('a').propose(enc(`x${i}`));
    net.tick(2);
    expect(() => net.raw('a').proposeConfChange({ type: 'promote', node: 'd' })).toThrow(/learner d is behind \(it holds [1-9]\d* of/);
    net.filter = undefined;
    net.tick(2);
    change(net, 'a', { type: 'promote', node: 'd' });
    expect(net.raw('a').status().config).toMatchObject({ voters: ['a', 'b', 'c', 'd'], learners: [] });
    // Four voters: a with one other is no quorum any more; with two it is.
    net.crash('c');
    net.crash('d');
    const commit = net.raw('a').status().commit;
    net.propose('a', 'y');
    net.tick(2, ['a', 'b']);
    expect(net.raw('a').status().commit).toBe(commit);
    net.restart('d');
    net.tick(3, ['a', 'b', 'd']);
    expect(net.raw('a').status().commit).toBeGreaterThan(commit);
  });

  /** The refusal of promoting `id` at `leader`, which must be a ConfChangeRefusedError of kind learner-behind. */
  function promoteRefusal(net: Network, leader: string, id: string): string {
    try {
      net.raw(leader).proposeConfChange({ type: 'promote', node: id });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfChangeRefusedError);
      expect((err as ConfChangeRefusedError).kind).toBe('learner-behind');
      return (err as Error).message;
    }
    throw new Error('promoted');
  }

  // Regression: a learner whose node never ran (match 0) was promoted on a log shorter than maxPromoteLag.
  it('never promotes a learner that has not answered, however short the log', () => {
    const net = new Network([...ABC]);
    net.elect('a');
    change(net, 'a', { type: 'add-learner', node: 'd', address: addr('d') });
    net.tick(12);
    expect(net.raw('a').status().commit).toBeLessThan(1_000);
    expect(promoteRefusal(net, 'a', 'd')).toMatch(/learner d has not answered this leader within an election timeout \(it holds 0 of \d+ committed entries\).*peer address d:2\?/);
    expect(net.raw('a').status().config).toMatchObject({ voters: ABC, learners: ['d'] });
    expect(net.raw('a').confChangePending()).toBe(false);
  });

  it('refuses a learner that answers heartbeats but holds none of the log', () => {
    const net = new Network([...ABC]);
    net.elect('a');
    net.join('d', ABC);
    net.filter = (m) => !(m.to === 'd' && m.type === MessageType.App);
    change(net, 'a', { type: 'add-learner', node: 'd', address: addr('d') });
    net.tick(3);
    expect(promoteRefusal(net, 'a', 'd')).toMatch(/learner d is behind \(it holds 0 of \d+ committed entries\)/);
    net.filter = undefined;
    net.tick(2);
    change(net, 'a', { type: 'promote', node: 'd' });
    expect(net.raw('a').status().config).toMatchObject({ voters: ['a', 'b', 'c', 'd'], learners: [] });
  });

  it('refuses a caught-up learner that stopped answering, until it answers again', () => {
    const net = withLearner();
    net.crash('d');
    net.tick(10);
    expect(promoteRefusal(net, 'a', 'd')).toMatch(/learner d has not answered/);
    net.restart('d');
    net.tick(2);
    change(net, 'a', { type: 'promote', node: 'd' });
    expect(net.raw('a').status().config.voters).toContain('d');
  });

  it('refuses changes that make no sense, with the reason', () => {
    const net = withLearner();
    const refused = (c: ConfChange) => {
      try {
        net.raw('a').proposeConfChange(c);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfChangeRefusedError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refused({ type: 'add-learner', node: 'b', address: addr('b') })).toMatch(/b is already a member/);
    expect(refused({ type: 'add-learner', node: 'e' })).toMatch(/needs its client and peer addresses/);
    expect(refused({ type: 'promote', node: 'b' })).toMatch(/already a voter/);
    expect(refused({ type: 'promote', node: 'zz' })).toMatch(/not a learner/);
    expect(refused({ type: 'remove', node: 'zz' })).toMatch(/not a member/);
  });
});

describe('membership: one change at a time', () => {
  it('a second change waits until the first is committed', () => {
    const net = new Network([...ABC]);
    net.elect('a');
    net.isolate('a');
    net.raw('a').proposeConfChange({ type: 'add-learner', node: 'd', address: addr('d') });
    expect(() => net.raw('a').proposeConfChange({ type: 'add-learner', node: 'e', address: addr('e') })).toThrow(ProposalDroppedError);
    expect(() => net.raw('a').proposeConfChange({ type: 'add-learner', node: 'e', address: addr('e') })).toThrow(/conf-change-pending/);
    net.heal();
    net.tick(2, ABC);
    change(net, 'a', { type: 'add-learner', node: 'e', address: addr('e') });
    expect(net.raw('a').status().config.learners).toEqual(['d', 'e']);
  });

  it('a new leader makes no change before it has committed an entry of its own term', () => {
    const net = new Network([...ABC]);
    net.raw('a').campaign();
    // Deliver until a is leader, before its no-op is acknowledged.
    while (net.raw('a').status().role !== Role.Leader) if (!net.deliverOne()) net.flushReadies();
    expect(() => net.raw('a').proposeConfChange({ type: 'add-learner', node: 'd', address: addr('d') })).toThrow(/conf-change-not-ready/);
    net.stabilize();
    expect(() => net.raw('a').proposeConfChange({ type: 'add-learner', node: 'd', address: addr('d') })).not.toThrow();
  });

  // The planted bug: with two changes in flight, the old and the newest configuration need not overlap.
  // a promotes d and e at once and commits with a, d, e (3 of 5) while b and c, still at {a, b, c},
  // elect c (2 of 3) and commit a different entry at the same index.
  function twoInFlight(bug: boolean): { net: Network; violations: string[]; secondRefused: boolean } {
    const net = new Network(['a', 'b', 'c'], { testOnlyBugs: { twoConfChangesInFlight: bug } });
    net.strict = false;
    net.elect('a');
    for (const id of ['d', 'e']) {
      net.join(id, ABC);
      change(net, 'a', { type: 'add-learner', node: id, address: addr(id) });
    }
    net.tick(2);
    net.cut('a', 'b');
    net.cut('a', 'c');
    net.raw('a').proposeConfChange({ type: 'promote', node: 'd' });
    let secondRefused = false;
    try {
      net.raw('a').proposeConfChange({ type: 'promote', node: 'e' });
    } catch {
      secondRefused = true;
    }
    net.raw('a').propose(enc('from-a'));
    net.stabilize();
    // b and c hear nothing from a: c campaigns and wins in {a, b, c}.
    net.tick(30, ['b', 'c']);
    const leader = net.leaders().find((id) => id !== 'a');
    if (leader !== undefined) net.propose(leader, 'from-new-leader');
    net.tick(3);
    return { net, violations: net.violations, secondRefused };
  }

  it('planted bug: two changes in flight let two majorities commit different entries at one index', () => {
    const { violations, secondRefused } = twoInFlight(true);
    expect(secondRefused).toBe(false);
    expect(violations.join('\n')).toMatch(/applied as/);
  });

  it('with the rule, the second change is refused and the same faults break nothing', () => {
    const { violations, secondRefused } = twoInFlight(false);
    expect(secondRefused).toBe(true);
    expect(violations).toEqual([]);
  });
});

describe('membership: remove', () => {
  it('a removed follower learns of its removal, is then replicated no more, and its campaigns disturb nobody', () => {
    const net = new Network([...ABC]);
    net.elect('a');
    change(net, 'a', { type: 'remove', node: 'c' });
    net.tick(2);
    expect(net.raw('a').status().config.voters).toEqual(['a', 'b']);
    // c holds and applied the change that removes it (its node stops on that).
    expect(net.raw('c').status().config.removed).toEqual(['c']);
    expect(net.n('c').appliedIndex).toBe(net.raw('a').status().commit);
    // An election timeout after the commit the leader stops replicating to it.
    expect(Object.keys(net.raw('a').status().progress).sort()).toEqual(['a', 'b', 'c']);
    net.tick(10);
    expect(Object.keys(net.raw('a').status().progress).sort()).toEqual(['a', 'b']);
    const term = net.raw('a').status().term;
    net.propose('a', 'after');
    net.tick(60);
    expect(net.raw('a').status()).toMatchObject({ role: Role.Leader, term });
    expect(net.appliedData('b')).toContain('after');
    expect(net.appliedData('c')).not.toContain('after');
    // Its name is remembered: a new machine never takes it over (nor an old certificate that names it).
    expect(net.raw('a').status().config.removed).toEqual(['c']);
    expect(() => net.raw('a').proposeConfChange({ type: 'add-learner', node: 'c', address: addr('c') })).toThrow(/c was removed from this cluster; add the new machine under a new name/);
  });

  // Found by the real-process membership test under load: the leader that proposed a removal lost its
  // leadership before the commit; the next leader tracked only the members of the new configuration, so the
  // removed node never heard the commit and ran on, campaigning in vain, instead of stopping.
  it('a removed follower still learns of its removal when the leader changes before the removal commits', () => {
    const net = new Network(['a', 'b', 'c', 'd']);
    net.elect('a');
    net.cut('a', 'c');
    for (const id of ['b', 'd']) net.cut(id, 'a', true); // b and d get the change; a hears no acks
    net.raw('a').proposeConfChange({ type: 'remove', node: 'c' });
    net.stabilize();
    expect(net.raw('b').status().config.voters).toEqual(['a', 'b', 'd']);
    expect(net.raw('a').confChangePending()).toBe(true);
    net.crash('a');
    net.heal();
    const removal = net.raw('b').status().lastIndex;
    net.tick(30, ['b', 'c', 'd']);
    const [leader] = net.leaders().filter((id) => id !== 'a');
    expect(['b', 'd']).toContain(leader);
    expect(net.raw(leader!).status().commit).toBeGreaterThan(removal);
    expect(net.raw('c').status().config.removed).toEqual(['c']);
    expect(net.n('c').appliedIndex).toBeGreaterThanOrEqual(removal);
    // As with the leader that proposed it: an election timeout after the commit, c is replicated no more.
    net.tick(12, ['b', 'c', 'd']);
    expect(Object.keys(net.raw(leader!).status().progress).sort()).toEqual(['a', 'b', 'd']);
  });

  it('a leader that removes itself leads until the removal commits, not counting itself, then hands over at once', () => {
    const net = new Network([...ABC]);
    net.elect('a');
    net.raw('a').proposeConfChange({ type: 'remove', node: 'a' });
    // Until b and c both hold the change, a does not count itself: with c cut off nothing commits.
    net.cut('a', 'c');
    net.stabilize();
    expect(net.raw('a').status().role).toBe(Role.Leader);
    expect(net.raw('a').confChangePending()).toBe(true);
    net.heal();
    net.tick(2);
    // Committed: a stepped down and told an up-to-date voter to campaign, which won without waiting.
    expect(net.raw('a').status().role).toBe(Role.Follower);
    const leaders = net.leaders();
    expect(leaders).toHaveLength(1);
    expect(['b', 'c']).toContain(leaders[0]);
    expect(net.count(MessageType.TimeoutNow, (m) => m.from === 'a')).toBe(1);
    // The two remaining voters make progress on their own.
    net.crash('a');
    net.propose(leaders[0]!, 'without-a');
    expect(net.appliedData('b')).toContain('without-a');
  });
});

describe('membership: the log decides', () => {
  it('an uncommitted change removed by a conflicting append takes its configuration with it', () => {
    const net = new Network([...ABC]);
    net.elect('a');
    net.isolate('a');
    net.raw('a').proposeConfChange({ type: 'add-learner', node: 'd', address: addr('d') });
    net.stabilize();
    expect(net.raw('a').status().config.learners).toEqual(['d']);
    net.tick(30, ['b', 'c']);
    const leader = net.leaders().find((id) => id !== 'a');
    expect(leader).toBeDefined();
    net.propose(leader!, 'y');
    net.heal();
    net.tick(3);
    expect(net.raw('a').status().config).toMatchObject({ voters: ABC, learners: [] });
    expect(net.appliedData('a')).toContain('y');
  });

  it('a snapshot carries the configuration at its index; a learner joining later installs it', () => {
    const net = withLearner();
    change(net, 'a', { type: 'promote', node: 'd' });
    net.propose('a', 'x2');
    const snap = net.compact('a');
    expect(snap.meta.config).toEqual({ voters: ['a', 'b', 'c', 'd'], addresses: { d: addr('d') } });
    net.join('e', ['a', 'b', 'c', 'd']);
    change(net, 'a', { type: 'add-learner', node: 'e', address: addr('e') });
    net.tick(2);
    expect(net.n('e').installedSnapshots).toHaveLength(1);
    expect(net.raw('e').status().config).toMatchObject({ voters: ['a', 'b', 'c', 'd'], learners: ['e'] });
    expect(appData(net, 'e')).toEqual(['x1', 'x2']);
    // A restart keeps it: the stored snapshot and the ConfChange entry after it.
    net.crash('e');
    net.restart('e');
    expect(net.raw('e').status().config).toMatchObject({ voters: ['a', 'b', 'c', 'd'], learners: ['e'] });
  });

  it('an append carrying a configuration that does not decode is refused and counted', () => {
    const b = nodeWithLog('b', ABC, [1], { term: 1, commit: 1 });
    const junk = { term: 2, index: 2, type: EntryType.ConfChange, data: enc('{"voters":[]}') };
    b.step(msg({ type: MessageType.App, from: 'a', to: 'b', term: 2, index: 1, logTerm: 1, entries: [junk], commit: 1 }));
    expect(b.status()).toMatchObject({ lastIndex: 1, refusedMessages: 1 });
    const good = { ...junk, data: encodeConfigEntry({ voters: ['a', 'b'], learners: [], addresses: {}, removed: [] }) };
    b.step(msg({ type: MessageType.App, from: 'a', to: 'b', term: 2, index: 1, logTerm: 1, entries: [good], commit: 1 }));
    drain(b);
    expect(b.status()).toMatchObject({ lastIndex: 2, config: { voters: ['a', 'b'] } });
  });

  it('a node restarted with ConfChange entries in its log runs with the last of them', () => {
    const data = encodeConfigEntry({ voters: ['a', 'b'], learners: ['c'], addresses: {}, removed: ['d'] });
    const raw = new RawNode(
      { id: 'b', voters: ABC, electionTicks: 10, heartbeatTicks: 1, random: () => 0 },
      { hardState: { term: 1, vote: '', commit: 1 }, entries: [{ term: 1, index: 1, type: EntryType.ConfChange, data }] },
    );
    expect(raw.status().config).toMatchObject({ voters: ['a', 'b'], learners: ['c'], removed: ['d'] });
  });
});

describe('membership: a member that missed the changes which added its leader', () => {
  // Found by the whole-node simulator (seed 11 with membership changes): c was cut off while d joined and
  // became leader; back again, c's log named a, b, c only, and c dropped every message from d as a
  // stranger's. It never caught up, and the cluster counted a voter that could never vote with it.
  it('accepts appends from a leader its log does not name yet, catches up and learns the configuration', () => {
    const net = new Network([...ABC]);
    net.elect('a');
    net.isolate('c');
    net.join('d', ABC);
    net.cut('c', 'd');
    change(net, 'a', { type: 'add-learner', node: 'd', address: addr('d') });
    net.tick(2);
    change(net, 'a', { type: 'promote', node: 'd' });
    net.raw('a').transferLeadership('d');
    net.stabilize();
    expect(net.leaders()).toEqual(['d']);
    change(net, 'd', { type: 'remove', node: 'a' });
    // c, cut off since before d joined, knows a, b and c only.
    expect(net.raw('c').status().config).toMatchObject({ voters: ABC, learners: [] });
    net.heal();
    net.propose('d', 'after');
    net.tick(20);
    expect(net.raw('c').status().config).toMatchObject({ voters: ['b', 'c', 'd'], removed: ['a'] });
    expect(appData(net, 'c')).toContain('after');
    expect(net.raw('c').status()).toMatchObject({ role: Role.Follower, leader: 'd' });
  });

  it('still drops votes and pre-votes from a node that is not a member', () => {
    const net = withLearner();
    const c = net.raw('c');
    const term = c.status().term;
    c.step(msg({ type: MessageType.Vote, from: 'zz', to: 'c', term: term + 5, logTerm: 99, index: 99 }));
    c.step(msg({ type: MessageType.PreVote, from: 'zz', to: 'c', term: term + 5, logTerm: 99, index: 99 }));
    expect(c.status().term).toBe(term);
    expect(drain(c).filter((m) => m.to === 'zz')).toEqual([]);
  });
});
