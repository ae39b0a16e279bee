// Write: the fenced write. All ops apply atomically, and only under the current grant of `lock` (see
// fencing.ts for the decision and its order).
import { checkOwner } from '../auth/access';
import { allows } from '../auth/permissions';
import { checkFence } from '../fencing';
import { checkSlotFence } from '../slotFencing';
import { invariant } from '../invariant';
import * as L from '../limits';
import { Reason, opt, refused, refusedAbout, uint, type RefusedResult, type ResultIn, type StatusTable } from '../results';
import { utf8ByteLength } from '../text';
import { writeCharge } from '../usage';
import { checkKey, checkLockName, checkSessionId, checkToken, isNonNegativeInt, isRecord } from './checks';
import type { CommandEntry, MachineState, RequestMeta } from './entry';
import type { WriteOp } from '../writeOps';

export interface WriteCommand extends RequestMeta {
  type: 'Write';
  lock: string;
  sessionId: string;
  token: number;
  ops: WriteOp[];
  /** Set for a write under a semaphore's permit (issue 33): `lock` names the semaphore, this its slot. */
  slot?: number;
}

function checkOps(v: unknown): string | null {
  if (!Array.isArray(v)) return 'ops must be an array';
  if (v.length === 0) return 'a write needs at least one op';
  if (v.length > L.MAX_OPS_PER_WRITE) return `a write has at most ${L.MAX_OPS_PER_WRITE} ops`;
  let bytes = 0;
  for (const op of v as unknown[]) {
    if (!isRecord(op)) return 'an op must be an object';
    const keyProblem = checkKey(op.key);
    if (keyProblem !== null) return keyProblem;
    bytes += utf8ByteLength(op.key as string);
    if (op.type === 'put') {
      if (!(op.value instanceof Uint8Array)) return 'a put needs a byte value';
      if (op.value.length > L.MAX_VALUE_BYTES) return `a value exceeds ${L.MAX_VALUE_BYTES} bytes`;
      bytes += op.value.length;
    } else if (op.type !== 'delete') {
      return "an op's type must be 'put' or 'delete'";
    }
  }
  if (bytes > L.MAX_WRITE_BYTES) return `a write exceeds ${L.MAX_WRITE_BYTES} bytes`;
  return null;
}

/** QUOTA_EXCEEDED when the write would take its caller above its `keys` or `store_bytes` quota. */
function writeQuotaRefusal(m: MachineState, payer: string, ops: readonly WriteOp[]): RefusedResult | null {
  if (payer === '') return null;
  const used = m.usage.counts(payer);
  const adds = writeCharge(m.kv, ops, payer);
  if (m.overQuota(payer, 'keys', used.keys, adds.keys)) return refusedAbout(Reason.QUOTA_EXCEEDED, 'keys');
  if (m.overQuota(payer, 'store_bytes', used.storeBytes, adds.bytes)) return refusedAbout(Reason.QUOTA_EXCEEDED, 'store_bytes');
  return null;
}

/**
 * Its own status: the fenced write was applied, every touched key's watermark is now `token`. `index`: the
 * entry that applied it (a retry answers with it). Absent in results stored before it was recorded (older
 * snapshots).
 */
const RESULTS = { written: { no: 11, fields: [uint(1, 'token'), uint(2, 'ops'), opt(uint(3, 'index'))] } } as const satisfies StatusTable;

export const write: CommandEntry<WriteCommand, 'written', typeof RESULTS> = {
  type: 'Write',
  kind: 'request',
  statuses: ['written'],
  results: RESULTS,
  member: 'write',
  encode: (c) => ({
    lock: c.lock,
    sessionId: c.sessionId,
    token: c.token,
    ops: c.ops.map((op) => (op.type === 'put' ? { key: op.key, value: op.value } : { delete: true, key: op.key })),
    ...(c.slot === undefined ? {} : { semaphore: true, slot: c.slot }),
  }),
  decode: (b, meta) => ({
    type: 'Write',
    ...meta,
    lock: b.str('lock'),
    sessionId: b.str('sessionId'),
    token: b.num('token'),
    ops: b.list('ops').map((op): WriteOp => (op.bool('delete') ? { type: 'delete', key: op.str('key') } : { type: 'put', key: op.str('key'), value: op.bytes('value') })),
    ...(b.bool('semaphore') ? { slot: b.num('slot') } : {}),
  }),
  validate: (c) => checkSessionId(c.sessionId) ?? checkLockName(c.lock) ?? checkToken(c.token) ?? checkOps(c.ops) ?? checkSlot(c.slot),
  permit(p, c) {
    const denied = c.ops.find((op) => !allows(p.table, p.caller, 'write', op.key));
    if (denied !== undefined) return refusedAbout(Reason.PERMISSION_DENIED, `write ${denied.key}`);
    return checkOwner(p.caller, p.sessionOwner(c.sessionId));
  },
  execute(m, index, c) {
    if (c.slot !== undefined) return writeUnderPermit(m, index, c, c.slot);
    const rec = m.locks.get(c.lock);
    const decision = checkFence({
      lock: c.lock,
      sessionId: c.sessionId,
      token: c.token,
      keys: c.ops.map((op) => op.key),
      record: rec,
      gcFloor: m.locks.gcFloor,
      sessionOpen: m.sessions.has(c.sessionId),
      kv: m.kv,
    });
    if (!decision.ok) return refused(decision.reason, decision.watermark, decision.key, decision.owner);
    invariant(rec !== undefined, 'accepted write without a lock record');
    const payer = c.caller ?? '';
    const quotaRefusal = writeQuotaRefusal(m, payer, c.ops);
    if (quotaRefusal !== null) return quotaRefusal;
    const plan = m.kv.plan(c.ops);
    if (m.kv.size + plan.newKeys.length > L.MAX_KEYS || m.kv.bytes + plan.bytesDelta > L.MAX_STORE_BYTES) {
      return refused(Reason.STORE_FULL, c.token);
    }
    applyOps(m, c, payer, (op) => {
      if (m.kv.apply(op, rec.name, c.token, payer)) rec.boundKeys++;
    });
    return { status: 'written', token: c.token, ops: c.ops.length, index };
  },
};

function checkSlot(v: unknown): string | null {
  return v === undefined || (isNonNegativeInt(v) && v < L.MAX_PERMITS) ? null : `slot must be an integer in [0, ${L.MAX_PERMITS - 1}]`;
}

/** The ops of an accepted write; the touched keys' cost moves to this write's caller: off their payers before, onto it after. */
function applyOps(m: MachineState, c: WriteCommand, payer: string, apply: (op: WriteOp) => void): void {
  const touched = new Set(c.ops.map((op) => op.key));
  for (const key of touched) {
    const r = m.kv.record(key);
    if (r !== undefined) m.usage.uncharge(r);
  }
  for (const op of c.ops) apply(op);
  for (const key of touched) {
    const r = m.kv.record(key);
    invariant(r !== undefined, 'a written key is missing');
    m.usage.charge(r);
  }
}

/** A write under the permit of `slot` of the semaphore `c.lock` (slotFencing.ts): its keys are bound to that slot. */
function writeUnderPermit(m: MachineState, index: number, c: WriteCommand, slot: number): ResultIn<'written', typeof RESULTS> | RefusedResult {
  const decision = checkSlotFence({
    semaphore: c.lock,
    slot,
    sessionId: c.sessionId,
    token: c.token,
    keys: c.ops.map((op) => op.key),
    record: m.semaphores.get(c.lock),
    sessionOpen: m.sessions.has(c.sessionId),
    kv: m.kv,
  });
  if (!decision.ok) return refused(decision.reason, decision.watermark, decision.key, decision.owner);
  const payer = c.caller ?? '';
  const quotaRefusal = writeQuotaRefusal(m, payer, c.ops);
  if (quotaRefusal !== null) return quotaRefusal;
  const plan = m.kv.plan(c.ops);
  if (m.kv.size + plan.newKeys.length > L.MAX_KEYS || m.kv.bytes + plan.bytesDelta > L.MAX_STORE_BYTES) {
    return refused(Reason.STORE_FULL, c.token);
  }
  applyOps(m, c, payer, (op) => m.kv.apply(op, c.lock, c.token, payer, slot));
  return { status: 'written', token: c.token, ops: c.ops.length, index };
}
