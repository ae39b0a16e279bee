// The fencing rules every downstream adapter must pass, each a named test, run against a store through one
// small interface. Each adapter's test file calls defineRuleMatrix with its own subject, so the same list of
// rules runs against every store; RULES is that list, for printing the rule x adapter matrix.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FencingClaimError, MAX_FENCING_TOKEN, type FencingClaim } from '../../src/fencing';

/** An outcome as every adapter reports it (the result's shape is the adapter's own). */
export type Outcome =
  | { status: 'APPLIED' | 'REPLAYED'; result: unknown; token: bigint; step: bigint }
  | { status: 'STALE'; watermark: bigint; lock: string | null }
  | { status: 'STALE_STEP'; watermark: bigint; lastStep: bigint; lock: string | null }
  | { status: 'WRONG_LOCK'; watermark: bigint; lock: string }
  | { status: 'NOT_FOUND'; watermark: bigint };

export type Key = string | number | bigint;

/** One store, fresh for each test: resources 1 and 2 exist with value 100 and no watermark. */
export interface MatrixSubject {
  /** Changes an existing resource (NOT_FOUND when it does not exist), recording the write in the audit trail in the same atomic step. */
  update(key: Key, value: number, claim: FencingClaim): Promise<Outcome>;
  /** Creates or changes the resource. */
  upsert(key: Key, value: number, claim: FencingClaim): Promise<Outcome>;
  remove(key: Key, claim: FencingClaim): Promise<Outcome>;
  /** The resource's value as the store holds it (undefined: no such resource). */
  value(key: Key): Promise<number | undefined>;
  /** The tokens of the writes update() recorded, in the order the store applied them. */
  auditTokens(): Promise<bigint[]>;
  /** raiseWatermarks after a restore, over every resource of this subject; how many it raised. */
  raise(minToken: bigint): Promise<number>;
  /** Puts a resource back to an older watermark and value, as a restore from an old backup would. */
  rewind(key: Key, fence: bigint, value: number): Promise<void>;
  /** `n` writers, each over a connection of its own, for the racing rules. */
  racers(n: number): Promise<{ writers: Array<(value: number, claim: FencingClaim) => Promise<Outcome>>; close(): Promise<void> }>;
  /** Other spellings of resource 1's key that the store itself reads as resource 1 (the store's identity of it). */
  spellingsOfOne: Key[];
  close(): Promise<void>;
}

export interface MatrixHost {
  open(): Promise<MatrixSubject>;
  shutdown?(): Promise<void>;
}

/** The rules, in order: the names the matrix prints. */
export const RULES = [
  'fresh: a token above the watermark applies and moves the watermark with the change',
  'stale: a token below the watermark is refused with the watermark, nothing applied',
  'replay: the same token and operation retried gets the first result; applied once',
  'step: the same token applies again only at a higher step (never fence <= token)',
  'zero rows told apart: a missing resource is NOT_FOUND, not STALE and not a retry',
  'per-resource: another lock is WRONG_LOCK; watermarks are per resource',
  'tombstone: a deleted resource keeps its watermark; an older token can neither change nor re-create it',
  'racing writers on separate connections: applied in token order, every refusal justified',
  'racing retries of one operation on separate connections: applied once, the others replayed',
  'restore raise: every token below the minimum refused, the minimum accepted',
  'huge tokens: exact up to 2^63-1, beyond (or 0, or a number) refused',
  'identity spellings: a deleted resource cannot come back under another spelling of its key',
] as const;

const LOCK = 'acct/1';
const claim = (token: bigint, more: Partial<FencingClaim> = {}): FencingClaim => ({ lock: LOCK, token, ...more });

export function defineRuleMatrix(adapter: string, host: MatrixHost): void {
  describe(`fencing rules on ${adapter}`, () => {
    let s: MatrixSubject;
    beforeEach(async () => {
      s = await host.open();
    });
    afterEach(async () => s.close());
    afterAll(async () => host.shutdown?.());
    const [fresh, stale, replay, step, zero, perResource, tombstone, racing, racingRetries, restore, huge, spellings] = RULES;

    it(fresh, async () => {
      expect(await s.update(1, 150, claim(41n))).toMatchObject({ status: 'APPLIED', token: 41n, step: 1n });
      expect(await s.update(1, 120, claim(42n))).toMatchObject({ status: 'APPLIED', token: 42n, step: 1n });
      expect(await s.value(1)).toBe(120);
      expect(await s.auditTokens()).toEqual([41n, 42n]);
    });

    it(stale, async () => {
      await s.update(1, 120, claim(42n));
      expect(await s.update(1, 999, claim(41n, { operationId: 'late' }))).toEqual({ status: 'STALE', watermark: 42n, lock: LOCK });
      expect(await s.value(1)).toBe(120);
      expect(await s.auditTokens()).toEqual([42n]);
      // A later retry of the refused operation is still refused: nothing was recorded for it.
      expect((await s.update(1, 999, claim(41n, { operationId: 'late' }))).status).toBe('STALE');
    });

    it(replay, async () => {
      const first = await s.update(1, 150, claim(41n, { operationId: 'deposit-50' }));
      expect(first.status).toBe('APPLIED');
      await s.update(1, 120, claim(42n));
      // Even after a newer holder wrote, the retry gets what its first attempt returned.
      const retry = await s.update(1, 150, claim(41n, { operationId: 'deposit-50' }));
      expect(retry).toEqual({ status: 'REPLAYED', token: 41n, step: 1n, result: (first as { result: unknown }).result });
      expect(await s.value(1)).toBe(120);
      expect(await s.auditTokens()).toEqual([41n, 42n]);
    });

    it(step, async () => {
      expect((await s.update(1, 110, claim(50n, { step: 1n }))).status).toBe('APPLIED');
      expect((await s.update(1, 120, claim(50n, { step: 2n }))).status).toBe('APPLIED');
      expect(await s.update(1, 777, claim(50n, { step: 2n, operationId: 'other' }))).toEqual({ status: 'STALE_STEP', watermark: 50n, lastStep: 2n, lock: LOCK });
      expect((await s.update(1, 777, claim(50n, { operationId: 'again' }))).status).toBe('STALE_STEP');
      expect((await s.update(1, 130, claim(50n, { step: 5n }))).status).toBe('APPLIED');
      expect(await s.value(1)).toBe(130);
      expect(await s.auditTokens()).toEqual([50n, 50n, 50n]);
    });

    it(zero, async () => {
      expect(await s.update(999, 1, claim(7n))).toEqual({ status: 'NOT_FOUND', watermark: 0n });
      expect(await s.remove(999, claim(7n))).toEqual({ status: 'NOT_FOUND', watermark: 0n });
      // A stale writer of an existing resource learns that it is stale, not that the resource is missing.
      await s.update(1, 5, claim(9n));
      expect((await s.update(1, 6, claim(8n))).status).toBe('STALE');
      // NOT_FOUND recorded no operation: the same claim applies once the resource exists.
      expect((await s.upsert(999, 3, claim(7n))).status).toBe('APPLIED');
      expect(await s.value(999)).toBe(3);
    });

    it(perResource, async () => {
      await s.update(1, 150, claim(100n));
      expect(await s.update(1, 1, claim(200n, { lock: 'acct/2' }))).toEqual({ status: 'WRONG_LOCK', watermark: 100n, lock: LOCK });
      // Resource 2 is fenced by acct/2: its low tokens are fine though resource 1 is at 100.
      expect((await s.update(2, 90, { lock: 'acct/2', token: 5n })).status).toBe('APPLIED');
      expect((await s.update(2, 80, { lock: 'acct/2', token: 6n })).status).toBe('APPLIED');
      expect(await s.value(1)).toBe(150);
      expect(await s.value(2)).toBe(80);
    });

    it(tombstone, async () => {
      await s.update(1, 150, claim(40n));
      expect((await s.remove(1, claim(50n))).status).toBe('APPLIED');
      expect(await s.value(1)).toBeUndefined();
      expect(await s.update(1, 1, claim(49n))).toEqual({ status: 'STALE', watermark: 50n, lock: LOCK });
      expect(await s.upsert(1, 1, claim(49n))).toEqual({ status: 'STALE', watermark: 50n, lock: LOCK });
      expect(await s.update(1, 1, claim(51n))).toEqual({ status: 'NOT_FOUND', watermark: 50n });
      expect(await s.value(1)).toBeUndefined();
      expect((await s.upsert(1, 5, claim(52n))).status).toBe('APPLIED');
      expect(await s.value(1)).toBe(5);
      expect((await s.update(1, 1, claim(51n))).status).toBe('STALE');
    });

    it(racing, async () => {
      const tokens = [3n, 8n, 1n, 6n, 2n, 7n, 5n, 4n];
      const r = await s.racers(tokens.length);
      try {
        const outcomes = await Promise.all(tokens.map((t, i) => r.writers[i]!(Number(t), claim(t))));
        const accepted = await s.auditTokens();
        for (let i = 1; i < accepted.length; i++) expect(accepted[i]! > accepted[i - 1]!).toBe(true);
        expect(accepted[accepted.length - 1]).toBe(8n);
        outcomes.forEach((o, i) => {
          if (o.status === 'STALE') expect(o.watermark > tokens[i]!).toBe(true);
          else expect(o.status).toBe('APPLIED');
        });
        expect(outcomes.filter((o) => o.status === 'APPLIED').length).toBe(accepted.length);
        expect(await s.value(1)).toBe(8);
      } finally {
        await r.close();
      }
    });

    it(racingRetries, async () => {
      const r = await s.racers(10);
      try {
        const outcomes = await Promise.all(r.writers.map((w) => w(175, claim(77n, { operationId: 'pay-invoice-9' }))));
        expect(outcomes.filter((o) => o.status === 'APPLIED')).toHaveLength(1);
        expect(outcomes.filter((o) => o.status === 'REPLAYED')).toHaveLength(9);
        expect(await s.auditTokens()).toEqual([77n]);
      } finally {
        await r.close();
      }
    });

    it(restore, async () => {
      await s.update(1, 150, claim(10n));
      await s.remove(2, { lock: 'acct/2', token: 11n });
      // The live system had reached token 60 when the store was restored to resource 1 at fence 10.
      expect((await s.update(1, 0, claim(59n))).status).toBe('APPLIED');
      await s.rewind(1, 10n, 150);
      expect(await s.raise(61n)).toBe(2); // resource 1 and resource 2's tombstone
      expect(await s.update(1, 1, claim(60n))).toEqual({ status: 'STALE', watermark: 61n, lock: LOCK });
      expect(await s.upsert(2, 1, { lock: 'acct/2', token: 60n })).toMatchObject({ status: 'STALE', watermark: 61n });
      expect((await s.update(1, 170, claim(61n))).status).toBe('APPLIED');
      expect(await s.raise(61n)).toBe(0);
      expect(await s.value(1)).toBe(170);
    });

    it(huge, async () => {
      const big = 1n << 53n;
      // 2^53+1 and 2^53+2 are one double apart: a comparison through doubles would see them equal.
      expect((await s.update(1, 1, claim(big + 2n))).status).toBe('APPLIED');
      expect(await s.update(1, 2, claim(big + 1n))).toEqual({ status: 'STALE', watermark: big + 2n, lock: LOCK });
      expect(await s.update(1, 2, claim(big + 2n, { step: 2n }))).toMatchObject({ status: 'APPLIED', token: big + 2n, step: 2n });
      expect((await s.update(1, 3, claim(MAX_FENCING_TOKEN - 1n))).status).toBe('APPLIED');
      expect((await s.update(1, 4, claim(MAX_FENCING_TOKEN))).status).toBe('APPLIED');
      expect(await s.update(1, 5, claim(MAX_FENCING_TOKEN - 1n, { operationId: 'late' }))).toEqual({ status: 'STALE', watermark: MAX_FENCING_TOKEN, lock: LOCK });
      await expect(s.update(1, 6, claim(MAX_FENCING_TOKEN + 1n))).rejects.toThrow(FencingClaimError);
      await expect(s.update(1, 6, claim(1n << 64n))).rejects.toThrow(FencingClaimError);
      await expect(s.update(1, 6, claim(0n))).rejects.toThrow(/1\.\.9223372036854775807/);
      await expect(s.update(1, 6, { lock: LOCK, token: 5 as unknown as bigint })).rejects.toThrow(/must be a bigint/);
      expect(await s.value(1)).toBe(4);
      expect(await s.auditTokens()).toEqual([big + 2n, big + 2n, MAX_FENCING_TOKEN - 1n, MAX_FENCING_TOKEN]);
    });

    it(spellings, async () => {
      expect(s.spellingsOfOne.length).toBeGreaterThan(0);
      await s.update(1, 150, claim(30n));
      expect((await s.remove(1, claim(31n))).status).toBe('APPLIED');
      for (const k of s.spellingsOfOne) {
        expect(await s.upsert(k, 7, claim(30n, { step: 2n })), `upsert ${JSON.stringify(String(k))}`).toEqual({ status: 'STALE', watermark: 31n, lock: LOCK });
        expect(await s.update(k, 7, claim(32n)), `update ${JSON.stringify(String(k))}`).toEqual({ status: 'NOT_FOUND', watermark: 31n });
        expect(await s.value(1)).toBeUndefined();
      }
      // A newer token re-creates it under any spelling, and the store reads it back as resource 1.
      const last = s.spellingsOfOne[s.spellingsOfOne.length - 1]!;
      expect((await s.upsert(last, 9, claim(33n))).status).toBe('APPLIED');
      expect(await s.value(1)).toBe(9);
      for (const k of s.spellingsOfOne) expect(await s.update(k, 8, claim(32n)), `update ${JSON.stringify(String(k))}`).toEqual({ status: 'STALE', watermark: 33n, lock: LOCK });
    });
  });
}
