// Parts 1 and 2 of the scale benchmark: the lock state machine's memory with many sessions and held locks,
// and the cost of snapshotting it and installing the snapshot.
//
// Every command goes through the real entry codec (encodeCommand -> decodeCommand) before apply(), as on a
// node: the strings the machine keeps are then the decoded ones, one instance per entry, exactly as in
// production (sharing the generator's strings would hide per-entry copies).
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { decodeCommand, encodeCommand } from '../../src/codec/commandCodec';
import { CONFIG_DEFAULTS } from '../../src/node/config';
import { LockStateMachine, validateCommand, type Command, type CommandResult } from '../../src/state';
import * as limits from '../../src/state/limits';
import { LevelStorage } from '../../src/storage/levelStorage';
import {
  acquireCommand,
  bytesEqual,
  check,
  lockName,
  mib,
  ms,
  openSessionCommand,
  peakRss,
  round,
  sessionId,
  settledMemory,
  time,
  timed,
  type MemorySample,
} from './scaleCommon';

export interface StateOptions {
  sessions: number;
  locksPerSession: number;
  /** Stored dedup results to add on top (0 = skip); capped by the table's own bounds. */
  dedupResults: number;
  log: (line: string) => void;
}

export interface LimitOverride {
  name: string;
  limit: number;
  raisedTo: number;
}

/**
 * Raises state-machine limits in this process only, when the requested state is beyond them. The limits
 * are plain exported constants read at apply time, so this changes which commands are refused, not the data
 * structures being measured. A real cluster refuses beyond them (TOO_MANY_LOCKS, TOO_MANY_SESSIONS).
 */
function raiseLimits(sessions: number, locksPerSession: number): LimitOverride[] {
  const wanted: Array<[keyof typeof limits, number]> = [
    ['MAX_SESSIONS', sessions],
    ['MAX_LOCKS', sessions * locksPerSession],
    ['MAX_LOCKS_PER_SESSION', locksPerSession],
  ];
  const done: LimitOverride[] = [];
  for (const [name, need] of wanted) {
    const limit = limits[name] as number;
    if (need <= limit) continue;
    Object.defineProperty(limits, name, { value: need });
    check(limits[name] === need, `could not raise ${name}`);
    done.push({ name, limit, raisedTo: need });
  }
  return done;
}

function restoreLimits(done: LimitOverride[]): void {
  for (const o of done) Object.defineProperty(limits, o.name, { value: o.limit });
}

/** Applies `command` at `index` the way LockApp does: entry bytes in, decoded command applied. */
function applyEncoded(m: LockStateMachine, index: number, command: Command): CommandResult {
  const decoded = decodeCommand(encodeCommand(command));
  check(decoded.type !== 'Undecodable' && validateCommand(decoded) === null, `entry ${index} did not decode to a valid command`);
  return m.apply(index, decoded);
}

/**
 * Captures `m` and encodes the capture a slice at a time, calling `between` after each slice (the machine
 * goes on changing); checks the bytes are `expected`, the state at the capture.
 */
function encodeWhileApplying(m: LockStateMachine, expected: Uint8Array, between: () => void): { captureMs: number; slices: number; longestMs: number; encodeMs: number } {
  const captured = timed(() => m.captureSnapshot());
  const encoding = captured.value;
  let slices = 0;
  let longestMs = 0;
  let encodeMs = 0;
  for (;;) {
    const step = timed(() => encoding.step());
    slices++;
    longestMs = Math.max(longestMs, step.ms);
    encodeMs += step.ms;
    if (step.value) break;
    between();
  }
  check(bytesEqual(encoding.bytes(), expected), 'the sliced encoding differs from writeSnapshot at the capture');
  return { captureMs: captured.ms, slices, longestMs, encodeMs };
}

function heapDelta(a: MemorySample, b: MemorySample): number {
  return b.heapUsed - a.heapUsed;
}

export async function runStateBench(opts: StateOptions): Promise<Record<string, unknown>> {
  const overrides = raiseLimits(opts.sessions, opts.locksPerSession);
  try {
    return await measureState(opts, overrides);
  } finally {
    restoreLimits(overrides);
  }
}

async function measureState(opts: StateOptions, overrides: LimitOverride[]): Promise<Record<string, unknown>> {
  const { sessions, locksPerSession, log } = opts;
  const locks = sessions * locksPerSession;
  for (const o of overrides) {
    log(`  note: ${o.name} is ${o.limit}; raised to ${o.raisedTo} in this process only (a real node refuses beyond it)`);
  }

  const base = settledMemory();
  let m: LockStateMachine | undefined = new LockStateMachine();
  let index = 0;
  let now = 1_700_000_000_000;

  const openT = timed(() => {
    for (let s = 0; s < sessions; s++) {
      const r = applyEncoded(m!, ++index, openSessionCommand('none', s, now++)).result;
      check(r.status === 'session_opened', `OpenSession ${s}: ${JSON.stringify(r)}`);
    }
  });
  const afterSessions = settledMemory();
  log(`  ${sessions} sessions opened in ${ms(openT.ms)} (${Math.round(sessions / (openT.ms / 1000))}/s incl. entry encode+decode)`);

  const acquireT = timed(() => {
    for (let s = 0; s < sessions; s++) {
      for (let k = 0; k < locksPerSession; k++) {
        const at = ++index;
        const r = applyEncoded(m!, at, acquireCommand('none', s, k, locksPerSession, now++)).result;
        check(r.status === 'granted' && r.token === at && r.newGrant, `Acquire ${s}/${k}: ${JSON.stringify(r)}`);
      }
    }
  });
  const afterLocks = settledMemory();
  log(`  ${locks} locks acquired in ${ms(acquireT.ms)} (${Math.round(locks / (acquireT.ms / 1000))}/s incl. entry encode+decode)`);

  const stats = m.stats();
  check(stats.sessions === sessions, `${stats.sessions} sessions open, expected ${sessions}`);
  check(stats.heldLocks === locks && stats.locks === locks, `${stats.heldLocks} locks held, expected ${locks}`);
  check(stats.dedupResults === 0, 'the dedup table should be empty so far');

  const perSession = heapDelta(base, afterSessions) / sessions;
  const perLock = heapDelta(afterSessions, afterLocks) / locks;
  log(`  heap: baseline ${mib(base.heapUsed)}, after sessions ${mib(afterSessions.heapUsed)}, after locks ${mib(afterLocks.heapUsed)}`);
  log(`  => ${perSession.toFixed(0)} bytes per session (no locks), ${perLock.toFixed(0)} bytes per held lock`);
  log(`  held locks (asserted): ${stats.heldLocks}; RSS ${mib(afterLocks.rss)}`);

  // Snapshot cost of sessions and locks alone, before the dedup table (a fixed cost at its bound) is added.
  const plain = timed(() => m!.writeSnapshot().byteLength);
  log(
    `  snapshot of sessions + locks alone (no dedup results): ${ms(plain.ms)}, ${mib(plain.value)} ` +
      `(${(plain.value / locks).toFixed(1)} bytes per lock, its session's share included)`,
  );

  // The dedup table is bounded by its own limits, independently of sessions and locks: fill it to its bound
  // with idempotent requests (re-acquiring a lock already held returns the same token and changes nothing).
  let dedup: Record<string, unknown> | undefined;
  let afterDedup = afterLocks;
  const clients = Math.min(limits.DEDUP_MAX_CLIENTS, sessions);
  const perClient = Math.min(limits.DEDUP_MAX_RESULTS_PER_CLIENT, Math.floor(opts.dedupResults / Math.max(1, clients)));
  if (opts.dedupResults > 0 && perClient > 0) {
    const dedupT = timed(() => {
      for (let r = 0; r < perClient; r++) {
        for (let c = 0; c < clients; c++) {
          const command: Command = {
            ...acquireCommand('none', c, r % locksPerSession, locksPerSession, now++),
            clientId: `client-${c}`,
            requestId: r + 1,
          };
          const res = applyEncoded(m!, ++index, command).result;
          check(res.status === 'granted' && !res.newGrant, `re-Acquire ${c}: ${JSON.stringify(res)}`);
        }
      }
    });
    afterDedup = settledMemory();
    const st = m.stats();
    check(st.dedupResults === clients * perClient, `dedup holds ${st.dedupResults} results`);
    const perResult = heapDelta(afterLocks, afterDedup) / st.dedupResults;
    log(
      `  dedup table: ${st.dedupClients} clients x ${perClient} results = ${st.dedupResults} (bound ${limits.DEDUP_MAX_RESULTS}) in ` +
        `${ms(dedupT.ms)}: +${mib(heapDelta(afterLocks, afterDedup))}, ${perResult.toFixed(0)} bytes per stored result`,
    );
    dedup = {
      clients: st.dedupClients,
      results: st.dedupResults,
      heapBytes: heapDelta(afterLocks, afterDedup),
      bytesPerResult: round(perResult),
    };
  }

  // ---- part 2: snapshot, encoded in one go (writeSnapshot), then as a node does it (captureSnapshot) --------
  // Results go into `let`s that are cleared when done, so that each heap figure counts only what is alive.
  let bytes: Uint8Array = new Uint8Array(0);
  let sessionsClosed = 0;
  const writeMs = time(() => (bytes = m!.writeSnapshot()));
  const withSnapshot = settledMemory();
  const dedupBytes = bytes.byteLength - plain.value; // what the dedup results added (header aside)
  const electionTimeoutMs = CONFIG_DEFAULTS.tickMs * CONFIG_DEFAULTS.electionTicks;
  log(
    `  snapshot: writeSnapshot ${ms(writeMs)} in one go (default election timeout ${electionTimeoutMs} ms); ` +
      `${mib(bytes.byteLength)} (${bytes.byteLength} bytes; dedup part ${mib(dedupBytes)})`,
  );
  log(`  heap held while the bytes were alive: ${mib(heapDelta(afterDedup, withSnapshot))}`);

  const save = await timeSaveSnapshot(bytes, index);
  log(`  snapshot written to LevelStorage (one synced batch): ${ms(save)}`);

  // readSnapshot runs checkInvariants (O(state)); timing it alone shows its share of the install.
  let problems: string[] = [];
  const invMs = time(() => (problems = m!.checkInvariants()));
  check(problems.length === 0, `invariants: ${problems.slice(0, 3).join('; ')}`);

  let restored = new LockStateMachine();
  const restoreMs = time(() => (restored = LockStateMachine.readSnapshot(bytes)));
  log(`  install: readSnapshot ${ms(restoreMs)} (of which checkInvariants ~${ms(invMs)})`);

  // Equal state: same stats, equal answers for sampled sessions and locks, and byte-identical snapshots
  // (snapshots are canonical, so this compares everything).
  const st1 = m.stats();
  const st2 = restored.stats();
  check(JSON.stringify(st1) === JSON.stringify(st2), `stats differ: ${JSON.stringify(st1)} vs ${JSON.stringify(st2)}`);
  for (const n of [0, 1, Math.floor(sessions / 2), sessions - 1]) {
    const a = JSON.stringify(m.getSession(sessionId(n)));
    check(a === JSON.stringify(restored.getSession(sessionId(n))) && a !== undefined, `session ${n} differs`);
  }
  for (const n of [0, 7, Math.floor(locks / 3), locks - 1]) {
    const a = JSON.stringify(m.describeLock(lockName(n)));
    check(a === JSON.stringify(restored.describeLock(lockName(n))) && a !== undefined, `lock ${n} differs`);
  }
  let same = false;
  const againMs = time(() => (same = bytesEqual(restored.writeSnapshot(), bytes)));
  check(same, 'the restored machine snapshots to different bytes');
  log(`  restored state equals the original (stats, samples, byte-identical re-snapshot in ${ms(againMs)}); held locks ${st2.heldLocks}`);

  const sliced = encodeWhileApplying(m, bytes, () => {
    // Between slices a session closes: its locks are released (records change, as do the sorted indexes).
    const closing = sessionsClosed++;
    const command: Command = { type: 'CloseSession', clientId: '', requestId: 0, now: now++, sessionId: sessionId(closing) };
    check(applyEncoded(m!, ++index, command).result.status === 'session_ended', `CloseSession ${closing}`);
  });
  log(
    `  as a node does it: capture ${ms(sliced.captureMs)}, then ${sliced.slices} slices of encoding (longest ${ms(sliced.longestMs)}, ` +
      `${ms(sliced.encodeMs)} in all) with ${sessionsClosed} sessions closed in between; bytes equal to writeSnapshot's at the capture`,
  );

  // Heap of the restored machine on its own: its strings come from the snapshot decoder, not from entries.
  m = undefined;
  const restoredOnly = settledMemory();
  const builtBytes = heapDelta(base, afterDedup);
  const restoredBytes = restoredOnly.heapUsed - base.heapUsed;
  log(`  heap of the state: built by apply ${mib(builtBytes)}, restored from the snapshot ${mib(restoredBytes)}`);
  void restored.lastApplied; // keep it alive until the measurement above
  const peak = peakRss();
  log(`  peak RSS so far ${mib(peak)}`);

  return {
    sessions,
    locksPerSession,
    locksHeld: stats.heldLocks,
    limitOverrides: overrides,
    heapUsed: {
      baseline: base.heapUsed,
      afterSessions: afterSessions.heapUsed,
      afterLocks: afterLocks.heapUsed,
      afterDedup: afterDedup.heapUsed,
    },
    rss: { afterSessions: afterSessions.rss, afterLocks: afterLocks.rss, peak },
    bytesPerSession: round(perSession),
    bytesPerLock: round(perLock),
    applyRate: {
      openSessionPerSec: Math.round(sessions / (openT.ms / 1000)),
      acquirePerSec: Math.round(locks / (acquireT.ms / 1000)),
    },
    dedup,
    snapshotWithoutDedup: { ms: round(plain.ms), bytes: plain.value, bytesPerLock: round(plain.value / locks) },
    snapshot: {
      totalMs: round(writeMs),
      bytes: bytes.byteLength,
      dedupBytes,
      heapWhileAliveBytes: heapDelta(afterDedup, withSnapshot),
      levelSaveMs: round(save),
      sliced: { captureMs: round(sliced.captureMs, 2), slices: sliced.slices, longestSliceMs: round(sliced.longestMs, 2), encodeMs: round(sliced.encodeMs) },
    },
    install: {
      checkInvariantsMs: round(invMs),
      totalMs: round(restoreMs),
      restoredEqual: true,
      restoredHeapBytes: restoredBytes,
      builtHeapBytes: builtBytes,
    },
  };
}

/**
 * Writes the snapshot into a fresh LevelStorage as one synced batch (persist with a snapshot, the path of a
 * follower installing one; saveSnapshot needs the log it compacts to be there, the write is the same).
 */
async function timeSaveSnapshot(data: Uint8Array, index: number): Promise<number> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-scale-snap-'));
  try {
    const storage = await LevelStorage.open(dir);
    const t0 = performance.now();
    await storage.persist({
      hardState: { term: 1, vote: '', commit: index },
      entries: [],
      snapshot: { meta: { index, term: 1, config: { voters: ['n1', 'n2', 'n3'] } }, data },
    });
    const took = performance.now() - t0;
    await storage.close();
    return took;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
