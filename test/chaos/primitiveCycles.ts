// The chaos workload's cycles for issue 33's primitives (docs/architecture.md#read-write-locks, #semaphores,
// #atomic-multi-lock), one per call, every operation through the Recorder:
//
//   permit    acquirePermit(sem, 3 permits) -> fenced write to the slot's key -> maybe get -> releasePermit
//   rw        acquire(lock, shared | exclusive); exclusive: write the lock's key; shared: sometimes a write
//             under the shared token (refused SHARED_GRANT) -> maybe get -> release
//   set       acquireAll(2-3 of 4 locks, in a random order) -> a write to each lock's key under the set's
//             token -> maybe get -> release each lock
//
// Semaphores, read-write locks and set locks have names of their own, so each cycle kind contends with its
// own kind (the checker judges each resource alone; the cross-resource invariants judge them together).
// Keys are bound to one resource for good: `<sem>/slot-<n>/k` to a slot, `<lock>/k` to a lock.
import type { FenceLockClient, LockHandle, Session } from '../../src/client';
import { checkedSlot, type KeyWrite, type LockMode, type Operation } from '../checker/history';
import type { Recorder } from './recorder';

export type CycleKind = 'permit' | 'rw' | 'set';

/** Probability of each kind of cycle (the rest: the plain lock cycle of workload.ts). */
export type PrimitiveMix = Record<CycleKind, number>;

export const PERMITS = 3;
const SEMAPHORES = 2;
const RW_LOCKS = 2;
const SET_LOCKS = 4;

export interface PrimitiveCounts {
  permitsGranted: number;
  sharedGranted: number;
  exclusiveGranted: number;
  setsGranted: number;
  sharedWritesRefused: number;
}

/** What a cycle needs from the workload: the recording client, its choices, and where to count. */
export interface CycleContext {
  rec: Recorder;
  client: FenceLockClient;
  session: Session;
  process: string;
  namespace: string;
  rnd: () => number;
  waitMs: number;
  tryProbability: number;
  readProbability: number;
  /** A unique value for a write. */
  nextValue: () => string;
  /** Registers a written key with its resource (for the final reads). */
  noteKey: (key: string, resource: string) => void;
  aborting: () => boolean;
  /** Counts an acquire's outcome and a write's outcome in the workload's stats. */
  countAcquire: (o: Operation) => void;
  countWrite: (o: Operation) => void;
  counts: PrimitiveCounts;
}

export function pickCycle(mix: PrimitiveMix, roll: number): CycleKind | undefined {
  let acc = 0;
  for (const kind of ['permit', 'rw', 'set'] as const) {
    acc += mix[kind];
    if (roll < acc) return kind;
  }
  return undefined;
}

export function runCycle(kind: CycleKind, c: CycleContext): Promise<void> {
  if (kind === 'permit') return permitCycle(c);
  if (kind === 'rw') return rwCycle(c);
  return setCycle(c);
}

const waitOf = (c: CycleContext): number => (c.rnd() < c.tryProbability ? 0 : c.waitMs);

async function maybeGet(c: CycleContext, key: string, resource: string): Promise<void> {
  if (c.rnd() < c.readProbability && !c.aborting()) await c.rec.get(c.process, c.client, key, resource);
}

/** A release of unknown outcome may leave the grant held: the session is given up (its lease frees it). */
function afterRelease(c: CycleContext, o: Operation): void {
  if (o.outcome === 'unknown') c.session.abandon('release outcome unknown');
}

async function permitCycle(c: CycleContext): Promise<void> {
  const sem = `${c.namespace}/sem-${Math.floor(c.rnd() * SEMAPHORES)}`;
  const a = await c.rec.acquirePermit(c.process, c.client, c.session, sem, PERMITS, waitOf(c));
  c.countAcquire(a.op);
  const permit = a.value;
  if (permit === undefined) return;
  c.counts.permitsGranted++;
  const resource = checkedSlot(sem, permit.slot);
  const key = `${sem}/slot-${permit.slot}/k`;
  c.noteKey(key, resource);
  c.countWrite((await c.rec.writePermit(c.process, c.client, permit, [{ key, value: c.nextValue() }])).op);
  await maybeGet(c, key, resource);
  if (c.aborting() || permit.isReleased()) return;
  afterRelease(c, (await c.rec.releasePermit(c.process, c.client, permit)).op);
}

async function rwCycle(c: CycleContext): Promise<void> {
  const lock = `${c.namespace}/rw-${Math.floor(c.rnd() * RW_LOCKS)}`;
  const mode: LockMode = c.rnd() < 0.6 ? 'shared' : 'exclusive';
  const a = await c.rec.acquire(c.process, c.client, c.session, lock, waitOf(c), mode);
  c.countAcquire(a.op);
  const handle = a.value;
  if (handle === undefined) return;
  const key = `${lock}/k`;
  c.noteKey(key, lock);
  if (mode === 'exclusive') {
    c.counts.exclusiveGranted++;
    c.countWrite((await c.rec.write(c.process, c.client, c.session, lock, handle.token, [{ key, value: c.nextValue() }])).op);
  } else {
    c.counts.sharedGranted++;
    // A reader's write: the store must refuse it (SHARED_GRANT), never apply it.
    if (c.rnd() < 0.3) {
      const w = await c.rec.write(c.process, c.client, c.session, lock, handle.token, [{ key, value: c.nextValue() }]);
      if (w.op.error?.reason === 'SHARED_GRANT') c.counts.sharedWritesRefused++;
    }
  }
  await maybeGet(c, key, lock);
  if (c.aborting() || handle.isReleased()) return;
  afterRelease(c, (await c.rec.release(c.process, c.client, handle, mode)).op);
}

/** 2 or 3 distinct set locks in a random order (sets in opposite orders must not deadlock). */
function pickSet(c: CycleContext): string[] {
  const names = Array.from({ length: SET_LOCKS }, (_, i) => `${c.namespace}/set-${i}`);
  for (let i = names.length - 1; i > 0; i--) {
    const j = Math.floor(c.rnd() * (i + 1));
    [names[i], names[j]] = [names[j]!, names[i]!];
  }
  return names.slice(0, c.rnd() < 0.5 ? 2 : 3);
}

async function setCycle(c: CycleContext): Promise<void> {
  const locks = pickSet(c);
  const a = await c.rec.acquireAll(c.process, c.client, c.session, locks, waitOf(c));
  c.countAcquire(a.op);
  const handles = a.value;
  if (handles === undefined) return;
  c.counts.setsGranted++;
  const value = c.nextValue();
  for (const h of handles) {
    const writes: KeyWrite[] = [{ key: `${h.name}/k`, value: `${value}@${h.name}` }];
    c.noteKey(writes[0]!.key, h.name);
    c.countWrite((await c.rec.write(c.process, c.client, c.session, h.name, h.token, writes)).op);
  }
  const one = handles[Math.floor(c.rnd() * handles.length)]!;
  await maybeGet(c, `${one.name}/k`, one.name);
  await releaseAll(c, handles);
}

async function releaseAll(c: CycleContext, handles: readonly LockHandle[]): Promise<void> {
  for (const h of handles) {
    if (c.aborting() || h.isReleased()) return;
    const r = await c.rec.release(c.process, c.client, h);
    afterRelease(c, r.op);
    if (r.op.outcome === 'unknown') return;
  }
}
