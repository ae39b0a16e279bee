/**
 * The Raft safety invariants the whole-node simulator checks as it runs. The checker knows nothing of
 * RawNode or the driver: raftObserver.ts feeds it what each node does (leaders seen, messages sent, log
 * writes, commit claims, applies, snapshots taken and installed, statuses, reads), so it is also exercised
 * with hand-made states in raftInvariants.test.ts.
 *
 * Vocabulary:
 * - A node *claims* index i committed when it persists a hard state with commit >= i (its log then holds
 *   the entry), applies entry i, or installs a snapshot covering i. The claim's term is the node's term
 *   at that moment; the entry was committed in that term or earlier.
 * - `decided` is the global record index -> the one entry ever claimed committed there.
 * - Quorums are majorities of the voters of a configuration (learners never count): the configuration in
 *   force at an entry, or one written after it (a leader commits under the newest configuration in its log).
 */
import { decodeConfigEntry, type FullConfig } from '../../src/raft/confChange';
import { quorumSize } from '../../src/raft/quorum';
import { EntryType, MessageType, type Entry, type Message, type NodeId, type PersistedState } from '../../src/raft/types';
import type { LogView } from '../../src/storage/memoryStorage';
import { crc32 } from '../../src/storage/checksum';

export class InvariantViolation extends Error {
  constructor(
    readonly invariant: string,
    readonly detail: string,
  ) {
    super(`${invariant}: ${detail}`);
    this.name = 'InvariantViolation';
  }
}

/** Identity of an entry's content (type and bytes), cheap to compare. */
export function entryKey(type: EntryType, data: Uint8Array): string {
  return `${type}|${Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('latin1')}`;
}

function keyOf(e: Entry): string {
  return entryKey(e.type, e.data);
}

/** An entry's content for a message: a no-op, or its size and checksum (commands are binary). */
function show(key: string): string {
  const body = key.slice(key.indexOf('|') + 1);
  if (body === '') return '<no-op>';
  return `<${body.length} bytes, crc ${crc32(Buffer.from(body, 'latin1')).toString(16)}>`;
}

interface Decided {
  /** -1 while known only from a snapshot's data. */
  term: number;
  key: string;
  /** Lowest term of a node claiming it committed: it was committed in this term or earlier. */
  claimTerm: number;
  by: string;
}

export interface StatusLike {
  term: number;
  commit: number;
  applied: number;
  lastIndex: number;
}

export interface CheckerOptions {
  /**
   * Also check durability directly: acknowledgements (granted votes, successful append responses) are sent
   * only for durable state, and every applied entry is durable on a quorum. Off, only the classic Raft
   * properties are checked, which catch the same bugs only once a crash actually loses something.
   */
  durability?: boolean;
}

export class Checker {
  readonly durability: boolean;
  /** Every node that ever ran, first the initial voters; membership changes add more. */
  readonly ids: NodeId[];
  /** The voters before any configuration entry (the bootstrap configuration of the first nodes). */
  private readonly initialVoters: readonly NodeId[];
  /** Index -> the voter sets of the configuration entries any node wrote there (any term). */
  private readonly configsWritten = new Map<number, Map<string, readonly NodeId[]>>();
  /** Members removed by a committed configuration: never a member of a committed one again. */
  private readonly committedRemoved = new Set<NodeId>();
  /** Indexes of committed configuration entries already checked. */
  private readonly committedConfigs = new Set<number>();
  /** term -> the leader of that term (Election Safety, over all history). */
  readonly leaders = new Map<number, NodeId>();
  readonly decided = new Map<number, Decided>();
  maxDecided = 0;
  /** Highest index applied by any node (a client may have been answered for it). */
  maxApplied = 0;
  /** `${index}:${term}` -> content and predecessor term of the one entry ever created there. */
  private readonly entryIds = new Map<string, { key: string; prevTerm: number | undefined }>();
  /** `${voter}@${term}` -> the candidate it granted its vote to. */
  private readonly votes = new Map<string, NodeId>();
  private readonly statuses = new Map<NodeId, StatusLike & { incarnation: number }>();
  /** Per node: its own commit index as claimed; it must never rewrite its log at or below it. */
  private readonly claimedUpTo = new Map<NodeId, number>();
  /** ReadIndex context -> lowest acceptable read index. */
  private readonly reads = new Map<string, number>();
  /** Snapshot index -> checksum of the state machine there, and who took it first. */
  private readonly snapshots = new Map<number, { crc: number; by: NodeId }>();

  constructor(
    ids: readonly NodeId[],
    private readonly durableOf: (id: NodeId) => LogView,
    opts: CheckerOptions = {},
  ) {
    this.ids = [...ids];
    this.initialVoters = [...ids];
    this.durability = opts.durability ?? true;
  }

  /** A node that joins (a membership change): its disk counts from now on. */
  addNode(id: NodeId): void {
    if (!this.ids.includes(id)) this.ids.push(id);
  }

  fail(invariant: string, detail: string): never {
    throw new InvariantViolation(invariant, detail);
  }

  /** Election Safety: at most one leader per term, ever. */
  onLeader(id: NodeId, term: number): void {
    const prev = this.leaders.get(term);
    if (prev === undefined) this.leaders.set(term, id);
    else if (prev !== id) this.fail('ElectionSafety', `term ${term} has two leaders: ${prev} and ${id}`);
  }

  /**
   * A message leaves node `msg.from`, whose log (written, maybe not yet synced) is `latest`. `immediate`:
   * it is sent before the write of the Ready it came in has synced (Ready.messages), as opposed to after
   * (Ready.messagesAfterPersist, which by construction follows every write issued before it was produced).
   *
   * Vote Safety: a node grants at most one vote per term, across crashes. With durability checks, an
   * acknowledgement sent immediately must not depend on anything not yet durable: a granted vote needs the
   * durable hard state to hold that vote (or a later term), a successful append response needs the acked
   * index durable with the term the node's log has there.
   */
  onSend(msg: Message, latest: LogView, immediate: boolean): void {
    if (msg.type === MessageType.VoteResp && !msg.reject) {
      const k = `${msg.from}@${msg.term}`;
      const prev = this.votes.get(k);
      if (prev === undefined) this.votes.set(k, msg.to);
      else if (prev !== msg.to) {
        this.fail('VoteSafety', `${msg.from} granted its vote in term ${msg.term} to both ${prev} and ${msg.to}`);
      }
      if (this.durability && immediate) {
        const hs = this.durableOf(msg.from).hardState;
        if (hs.term < msg.term || (hs.term === msg.term && hs.vote !== msg.to)) {
          this.fail(
            'DurableBeforeAck',
            `${msg.from} granted its vote to ${msg.to} in term ${msg.term} while its durable hard state is ` +
              `term ${hs.term} vote '${hs.vote}'`,
          );
        }
      }
    } else if (msg.type === MessageType.AppResp && !msg.reject && this.durability && immediate) {
      const m = msg.matchIndex;
      const dv = this.durableOf(msg.from);
      if (m > dv.snapshotIndex) {
        const dt = dv.term(m);
        const lt = latest.term(m);
        if (dt === undefined || (lt !== undefined && dt !== lt)) {
          this.fail(
            'DurableBeforeAck',
            `${msg.from} acknowledged index ${m} to ${msg.to} (term ${msg.term}) but its durable log has ` +
              `${dt === undefined ? 'no entry' : `term ${dt}`} there (written: term ${String(lt)})`,
          );
        }
      }
    }
  }

  /**
   * Node `id` wrote `written` into its log, which now reads as `log`.
   * Log Matching, checked incrementally: an (index, term) pair always names the same content with the same
   * predecessor term, so two logs agreeing at (i, t) agree on everything before i. Terms never decrease
   * along a log. No entry of a term >= the claim term of a committed entry is created over it (Leader
   * Completeness), and no node rewrites its log at or below its own commit index.
   */
  onLogWrite(id: NodeId, log: LogView, written: readonly Entry[]): void {
    const own = this.claimedUpTo.get(id) ?? 0;
    for (const e of written) {
      if (e.index <= log.snapshotIndex) continue;
      const prevTerm = log.term(e.index - 1);
      if (prevTerm !== undefined && e.term < prevTerm) {
        this.fail('LogTermOrder', `${id} wrote term ${e.term} at index ${e.index} after term ${prevTerm}`);
      }
      const key = keyOf(e);
      if (e.type === EntryType.ConfChange) this.configWritten(e);
      const idKey = `${e.index}:${e.term}`;
      const rec = this.entryIds.get(idKey);
      if (rec === undefined) this.entryIds.set(idKey, { key, prevTerm });
      else {
        if (rec.key !== key) {
          this.fail('LogMatching', `two different entries at index ${e.index} term ${e.term}: ${show(rec.key)} and ${show(key)} (written by ${id})`);
        }
        if (prevTerm !== undefined) {
          if (rec.prevTerm === undefined) rec.prevTerm = prevTerm;
          else if (rec.prevTerm !== prevTerm) {
            this.fail(
              'LogMatching',
              `entry ${e.index}/${e.term} follows term ${rec.prevTerm} in one log and term ${prevTerm} in ${id}'s`,
            );
          }
        }
      }
      const d = this.decided.get(e.index);
      if (d && !(d.key === key && (d.term < 0 || d.term === e.term))) {
        if (e.term >= d.claimTerm) {
          this.fail(
            'LeaderCompleteness',
            `${id} wrote ${show(key)} (term ${e.term}) at index ${e.index}, where ${show(d.key)} (term ${d.term}) was ` +
              `committed by term ${d.claimTerm} (${d.by}): a leader of term ${e.term} lacked a committed entry`,
          );
        }
        if (e.index <= own) {
          this.fail('CommittedTruncated', `${id} overwrote index ${e.index} at or below its own commit ${own}`);
        }
      }
    }
  }

  /** Node `id`, in term `term`, claims everything up to `commit` in `log` committed. */
  onCommitClaim(id: NodeId, term: number, commit: number, log: LogView): void {
    const from = Math.max(this.claimedUpTo.get(id) ?? 0, log.snapshotIndex) + 1;
    for (let i = from; i <= commit; i++) {
      const e = log.entry(i);
      if (!e) this.fail('CommitBeyondLog', `${id} claims commit ${commit} but its log ends at ${log.lastIndex}`);
      this.decide(i, e.term, keyOf(e), term, `${id} commit`);
      this.configCommitted(id, e);
    }
    if (commit > (this.claimedUpTo.get(id) ?? 0)) this.claimedUpTo.set(id, commit);
  }

  /** State Machine Safety / committed stays committed: one entry per index, ever. */
  private decide(index: number, term: number, key: string, claimTerm: number, by: string): void {
    const d = this.decided.get(index);
    if (d === undefined) {
      this.decided.set(index, { term, key, claimTerm, by });
      if (index > this.maxDecided) this.maxDecided = index;
      return;
    }
    if (d.key !== key || (term >= 0 && d.term >= 0 && d.term !== term)) {
      this.fail(
        'StateMachineSafety',
        `index ${index}: ${d.by} (term ${d.claimTerm}) committed ${show(d.key)} of term ${d.term}, ` +
          `${by} (term ${claimTerm}) committed ${show(key)} of term ${term}`,
      );
    }
    if (d.term < 0 && term >= 0) d.term = term;
    if (claimTerm < d.claimTerm) {
      d.claimTerm = claimTerm;
      d.by = by;
    }
  }

  /**
   * Node `id` (in term `term`, having applied up to `appliedBefore`) applies `e`; `voters`: those of the
   * configuration in force at `e` in its log, and `current` those of the configuration it runs with. The
   * entry must be durable on a majority of one of them, or of the voters of a configuration some node
   * wrote after it: the leader that committed it counted under the newest configuration of its log, which
   * takes effect when appended, before it is written.
   */
  onApply(id: NodeId, term: number, e: Entry, appliedBefore: number, voters: readonly NodeId[] = this.initialVoters, current: readonly NodeId[] = voters): void {
    if (e.index !== appliedBefore + 1) {
      this.fail('ApplyOrder', `${id} applied index ${e.index} after ${appliedBefore}`);
    }
    this.decide(e.index, e.term, keyOf(e), term, `${id} apply`);
    this.configCommitted(id, e);
    if (this.durability) {
      const held = (n: NodeId): boolean => {
        const dv = this.durableOf(n);
        return dv.snapshotIndex >= e.index || dv.term(e.index) === e.term;
      };
      const majority = (vs: readonly NodeId[]): boolean => vs.filter(held).length >= quorumSize(vs.length);
      if (!majority(voters) && !majority(current) && !this.laterConfigs(e.index).some(majority)) {
        this.fail(
          'DurableQuorum',
          `${id} applied index ${e.index} (term ${e.term}) while only ${voters.filter(held).length} of its ${voters.length} voters ` +
            `(${voters.join(',')}) hold it durably, nor a majority of any configuration written after it`,
        );
      }
    }
    if (e.index > this.maxApplied) this.maxApplied = e.index;
  }

  private laterConfigs(index: number): Array<readonly NodeId[]> {
    const out: Array<readonly NodeId[]> = [];
    for (const [i, sets] of this.configsWritten) if (i > index) out.push(...sets.values());
    return out;
  }

  private configWritten(e: Entry): void {
    const c = decodeConfigEntry(e.data);
    if (typeof c === 'string') return; // the core refuses such an append; nothing to count under
    const sets = this.configsWritten.get(e.index) ?? new Map<string, readonly NodeId[]>();
    sets.set(c.voters.join(','), c.voters);
    this.configsWritten.set(e.index, sets);
  }

  /** A configuration entry was committed: a member it removed is never a member of a committed one again. */
  private configCommitted(id: NodeId, e: Entry): void {
    if (e.type !== EntryType.ConfChange || this.committedConfigs.has(e.index)) return;
    this.committedConfigs.add(e.index);
    const c = decodeConfigEntry(e.data);
    if (typeof c === 'string') this.fail('ConfigEntry', `${id} committed a malformed configuration at ${e.index}: ${c}`);
    const back = [...c.voters, ...c.learners].filter((m) => this.committedRemoved.has(m));
    if (back.length > 0) this.fail('RemovedRejoined', `the configuration committed at ${e.index} lists ${back.join(',')}, removed by an earlier one`);
    for (const r of c.removed) this.committedRemoved.add(r);
  }

  /**
   * Node `id` wrote a configuration entry at `index`: it differs from the one before it (`prev`, in force
   * at index - 1 in the same log) by one server, in one of the three allowed steps.
   */
  onConfigEntry(id: NodeId, index: number, prev: FullConfig, next: FullConfig): void {
    const role = (c: FullConfig, m: NodeId): string => (c.voters.includes(m) ? 'voter' : c.learners.includes(m) ? 'learner' : 'none');
    const everyone = new Set([...prev.voters, ...prev.learners, ...next.voters, ...next.learners]);
    const steps = [...everyone].filter((m) => role(prev, m) !== role(next, m)).map((m) => `${m}: ${role(prev, m)} -> ${role(next, m)}`);
    const allowed = new Set(['none -> learner', 'learner -> voter', 'voter -> none', 'learner -> none']);
    if (steps.length !== 1 || !allowed.has(steps[0]!.slice(steps[0]!.indexOf(': ') + 2))) {
      this.fail('SingleServerChange', `${id} wrote a configuration at ${index} that is not one server away from the one before it: ${steps.join('; ') || 'no change'}`);
    }
  }

  /** Node `id`, in force with `actual`, whose log (or snapshot) ends with the configuration `expected`. */
  onNodeConfig(id: NodeId, actual: FullConfig, expected: FullConfig): void {
    // Runs after every event of every node: the descriptions are built only for a violation.
    if (sameMembers(actual.voters, expected.voters) && sameMembers(actual.learners, expected.learners) && sameMembers(actual.removed, expected.removed)) return;
    const show = (c: FullConfig): string => `voters ${c.voters.join(',')} learners ${c.learners.join(',') || '-'} removed ${c.removed.join(',') || '-'}`;
    this.fail('ConfigIsLastEntry', `${id} runs with ${show(actual)}, but its log's last configuration is ${show(expected)}`);
  }

  /**
   * A leader's log holds at most one configuration entry above the commit index (its own, or the highest any
   * node claimed): one change in flight.
   */
  onLeaderLog(id: NodeId, term: number, commit: number, log: LogView): void {
    const pending: number[] = [];
    for (let i = Math.max(commit, this.maxDecided, log.snapshotIndex) + 1; i <= log.lastIndex; i++) {
      if (log.entry(i)?.type === EntryType.ConfChange) pending.push(i);
    }
    if (pending.length > 1) this.fail('OneChangeInFlight', `${id}, leader of term ${term}, holds uncommitted configuration entries at ${pending.join(', ')}`);
  }

  /** `id` became leader of `term` with `voters` in force: a majority of them granted it their votes (itself included). */
  onElected(id: NodeId, term: number, voters: readonly NodeId[]): void {
    const granted = voters.filter((v) => v === id || this.votes.get(`${v}@${term}`) === id);
    if (granted.length < quorumSize(voters.length)) {
      this.fail('ElectionQuorum', `${id} leads term ${term} with the votes of ${granted.join(',') || 'nobody'}, not a majority of its voters ${voters.join(',')}`);
    }
  }

  /**
   * Node `id` compacted its log at `index` with a snapshot of its state machine (checksum `crc`). Every node's
   * state at one index is the same: the applied prefixes are the same.
   */
  onSnapshotTaken(id: NodeId, index: number, crc: number): void {
    const known = this.snapshots.get(index);
    if (known === undefined) this.snapshots.set(index, { crc, by: id });
    else if (known.crc !== crc) {
      this.fail('StateMachineSafety', `${id}'s state at index ${index} differs from ${known.by}'s there (snapshot checksums)`);
    }
  }

  /**
   * Node `id` (applied up to `appliedBefore`) replaces its state by a snapshot whose state
   * machine has checksum `crc`: never backwards, never at a term other than the committed one, and the same
   * state the node that took it had there.
   */
  onSnapshotInstall(id: NodeId, meta: { index: number; term: number }, crc: number, appliedBefore: number): void {
    if (meta.index < appliedBefore) {
      this.fail('AppliedRegression', `${id} installed a snapshot at ${meta.index} after applying up to ${appliedBefore}`);
    }
    const d = this.decided.get(meta.index);
    if (d && d.term >= 0 && d.term !== meta.term) {
      this.fail('StateMachineSafety', `${id} installed a snapshot at ${meta.index} term ${meta.term}; committed there: term ${d.term}`);
    }
    const taken = this.snapshots.get(meta.index);
    if (taken !== undefined && taken.crc !== crc) {
      this.fail('SnapshotContent', `${id} installed a snapshot at ${meta.index} whose state differs from the one ${taken.by} took there`);
    }
    if (meta.index > this.maxApplied) this.maxApplied = meta.index;
  }

  /** Monotonic term/commit/applied within one incarnation of a node; applied <= commit <= last index. */
  onStatus(id: NodeId, incarnation: number, st: StatusLike): void {
    const prev = this.statuses.get(id);
    if (prev && prev.incarnation === incarnation) {
      for (const f of ['term', 'commit', 'applied'] as const) {
        if (st[f] < prev[f]) this.fail('Monotonic', `${id}'s ${f} went back from ${prev[f]} to ${st[f]}`);
      }
    }
    if (st.applied > st.commit) this.fail('AppliedBeyondCommit', `${id} applied ${st.applied} > commit ${st.commit}`);
    if (st.commit > st.lastIndex) this.fail('CommitBeyondLog', `${id} commit ${st.commit} > last index ${st.lastIndex}`);
    this.statuses.set(id, { incarnation, term: st.term, commit: st.commit, applied: st.applied, lastIndex: st.lastIndex });
  }

  /** A node restarted from `loaded`: nothing durable goes back. */
  onRestart(id: NodeId, loaded: PersistedState, st: StatusLike): void {
    const hs = loaded.hardState;
    if (st.term < hs.term) this.fail('RestartRegression', `${id} restarted at term ${st.term} below its durable term ${hs.term}`);
    if (st.commit < hs.commit) {
      this.fail('RestartRegression', `${id} restarted with commit ${st.commit} below its durable commit ${hs.commit}`);
    }
    this.claimedUpTo.set(id, hs.commit);
  }

  /**
   * Leader Completeness: a leader of term T holds every entry committed in a term < T. `log` is its
   * written log (valid up to `lastIndex` when nothing of it is still unwritten).
   */
  checkLeader(id: NodeId, term: number, log: LogView, lastIndex: number): void {
    for (let i = log.snapshotIndex + 1; i <= this.maxDecided; i++) {
      const d = this.decided.get(i);
      if (!d || d.claimTerm >= term) continue;
      if (i > lastIndex) {
        this.fail(
          'LeaderCompleteness',
          `${id}, leader of term ${term}, has last index ${lastIndex} but ${show(d.key)} was committed at ${i} by term ${d.claimTerm} (${d.by})`,
        );
      }
      const e = log.entry(i);
      if (e && (keyOf(e) !== d.key || (d.term >= 0 && e.term !== d.term))) {
        this.fail(
          'LeaderCompleteness',
          `${id}, leader of term ${term}, holds ${show(keyOf(e))} (term ${e.term}) at ${i} where ${show(d.key)} ` +
            `(term ${d.term}) was committed by term ${d.claimTerm} (${d.by})`,
        );
      }
    }
  }

  /** A linearizable read issued now must not return a read index below anything already applied. */
  onReadRequest(context: string): void {
    this.reads.set(context, this.maxApplied);
  }

  onReadState(id: NodeId, context: string, index: number): void {
    const min = this.reads.get(context);
    if (min === undefined) this.fail('LinearizableRead', `${id} returned a read state for unknown context ${context}`);
    if (index < min) {
      this.fail('LinearizableRead', `${id} answered read ${context} at index ${index}, but index ${min} was applied before it was issued`);
    }
  }
}

/** The same ids in the same order (as the joined descriptions compared). */
function sameMembers(a: readonly NodeId[], b: readonly NodeId[]): boolean {
  return a.length === b.length && a.every((m, i) => m === b[i]);
}
