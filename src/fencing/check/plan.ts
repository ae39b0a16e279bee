// The checks of `fencelock check-resource`: the resource-side rules of fencing tokens played against one
// dedicated resource with real tokens, each a row of what was expected, what the resource answered, and
// whether the rule held. The order matters: each check starts from the watermark the previous ones left.
import { checkClaim, type CheckedClaim } from '../token';
import type { Grants } from './grants';
import type { CheckTarget, WriteOutcome, WriteStatus } from './target';

export interface CheckRow {
  /** Short name, stable for scripts (`stale-refused`). */
  check: string;
  /** The rule in words. */
  rule: string;
  /** The claim written (none for the row that only compares tokens, or raises the watermark). */
  claim?: { lock: string; token: string; step: string; operationId: string };
  expected: string;
  observed: string;
  held: boolean;
}

export interface CheckReport {
  target: { kind: string; resource: string };
  lock: string;
  rows: CheckRow[];
  /** Every row held. */
  held: boolean;
}

export interface CheckOptions {
  /** Also raise the resource's watermark as a restore does (permanent): needs a target with `raise`. */
  includeRestore: boolean;
}

const claimJson = (c: CheckedClaim): CheckRow['claim'] => ({ lock: c.lock, token: c.token.toString(), step: c.step.toString(), operationId: c.operationId });

function observedText(o: WriteOutcome): string {
  return o.detail === '' ? o.status : `${o.status} (${o.detail})`;
}

/** Writes the claim and compares the resource's answer with the statuses the rule allows. */
async function writeRow(target: CheckTarget, check: string, rule: string, claim: CheckedClaim, allowed: WriteStatus[]): Promise<CheckRow> {
  const base = { check, rule, claim: claimJson(claim), expected: allowed.join(' or ') };
  try {
    const o = await target.write(claim);
    return { ...base, observed: observedText(o), held: allowed.includes(o.status) };
  } catch (err) {
    // A resource that breaks on a rule (a crash, a reset connection) has not kept it.
    return { ...base, observed: `ERROR (${err instanceof Error ? err.message : String(err)})`, held: false };
  }
}

/** Runs every check in order; the newer grant stays held until the caller closes its grants. */
export async function runChecks(target: CheckTarget, grants: Grants, opts: CheckOptions): Promise<CheckReport> {
  if (opts.includeRestore && !target.raise) throw new RangeError(`the ${target.kind} target cannot raise its watermark`);
  const lock = grants.lock;
  const claim = (token: bigint, step: bigint, operationId: string): CheckedClaim => checkClaim({ lock, token, step, operationId });
  const rows: CheckRow[] = [];

  const { older, newer } = await grants.twoGrants();
  rows.push({
    check: 'tokens',
    rule: 'two grants of the lock, one after the other: the later token is larger',
    expected: 'older < newer',
    observed: older < newer ? `${older} < ${newer}` : `${older} >= ${newer}`,
    held: older < newer,
  });

  rows.push(await writeRow(target, 'newer-applies', 'the newer holder writes: accepted, the watermark becomes its token', claim(newer, 1n, 'check-step-1'), ['APPLIED']));
  rows.push(await writeRow(target, 'stale-refused', 'the older token after the newer one wrote: refused, nothing applied', claim(older, 1n, 'check-stale'), ['STALE']));
  // A resource that stores no answers (the proxy) cannot replay one: it refuses the retry, which applies nothing either.
  const [replay, replayRule]: [WriteStatus[], string] = target.storesAnswers
    ? [['REPLAYED'], 'the first answer again, nothing applied twice']
    : [['STALE_STEP'], 'refused (no stored answer to replay), nothing applied twice'];
  rows.push(await writeRow(target, 'retry-replayed', `a retry with the same token and operation id: ${replayRule}`, claim(newer, 1n, 'check-step-1'), replay));
  rows.push(await writeRow(target, 'higher-step', 'the same token at a higher step: accepted (a later step of one grant)', claim(newer, 2n, 'check-step-2'), ['APPLIED']));
  rows.push(await writeRow(target, 'same-step-refused', 'the same token at the same step, another operation: refused', claim(newer, 2n, 'check-step-2-again'), ['STALE_STEP']));
  rows.push(await writeRow(target, 'lower-step-refused', 'the same token at a lower step: refused', claim(newer, 1n, 'check-step-1-again'), ['STALE_STEP']));

  const other = await grants.otherLock();
  rows.push(
    await writeRow(target, 'other-lock-refused', `a token of another lock (${other.lock}): refused, tokens of different locks are not compared`, checkClaim({ lock: other.lock, token: other.token, step: 1n, operationId: 'check-other-lock' }), [
      'WRONG_LOCK',
    ]),
  );

  if (opts.includeRestore && target.raise) rows.push(...(await restoreRows(target, target.raise.bind(target), grants, claim, newer)));
  return { target: { kind: target.kind, resource: target.resource }, lock, rows, held: rows.every((r) => r.held) };
}

/** A restore raise: the watermark goes to the lock's latest token + 1, so the current holder is refused and only the next grant passes. */
async function restoreRows(
  target: CheckTarget,
  raise: (min: bigint) => Promise<void>,
  grants: Grants,
  claim: (token: bigint, step: bigint, operationId: string) => CheckedClaim,
  holder: bigint,
): Promise<CheckRow[]> {
  const min = (await grants.latestToken()) + 1n;
  await raise(min);
  const refused = await writeRow(target, 'restore-raise', `after raising the watermark to the latest token + 1 (${min}): the current holder's token is refused`, claim(holder, 3n, 'check-step-3'), [
    'STALE',
  ]);
  const next = await grants.nextGrant();
  const accepted = await writeRow(target, 'after-raise-next-grant', `the next grant after the raise (its token is at least ${min}): accepted`, claim(next, 1n, 'check-step-1'), ['APPLIED']);
  return [refused, accepted];
}
