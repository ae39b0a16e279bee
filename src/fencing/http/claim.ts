// Reads a fencing claim from request headers, and says in an HTTP answer why a claim was refused.
import type { IncomingHttpHeaders } from 'node:http';
import { checkClaim, FencingClaimError, parseFencingNumber, type CheckedClaim } from '../token';
import type { Refusal } from '../watermark';
import { FENCING_LOCK_HEADER, FENCING_STEP_HEADER, FENCING_TOKEN_HEADER, FENCING_WATERMARK_HEADER, IDEMPOTENCY_KEY_HEADER } from './headers';

/** A claim, or the answer a request with a missing (428) or malformed (400) one gets. */
export type ClaimFromHeaders = { ok: true; claim: CheckedClaim } | { ok: false; status: 400 | 428; message: string };

function single(headers: IncomingHttpHeaders, name: string): string | string[] | undefined {
  return headers[name.toLowerCase()];
}

export function claimFromHeaders(headers: IncomingHttpHeaders): ClaimFromHeaders {
  const token = single(headers, FENCING_TOKEN_HEADER);
  const lock = single(headers, FENCING_LOCK_HEADER);
  if (token === undefined || lock === undefined) {
    return { ok: false, status: 428, message: `this resource is fenced: send ${FENCING_TOKEN_HEADER} and ${FENCING_LOCK_HEADER} (the lock and token you hold)` };
  }
  const step = single(headers, FENCING_STEP_HEADER);
  const opId = single(headers, IDEMPOTENCY_KEY_HEADER);
  for (const [name, v] of [[FENCING_TOKEN_HEADER, token], [FENCING_LOCK_HEADER, lock], [FENCING_STEP_HEADER, step], [IDEMPOTENCY_KEY_HEADER, opId]] as const) {
    if (Array.isArray(v)) return { ok: false, status: 400, message: `${name} given more than once` };
  }
  const t = parseFencingNumber(token as string);
  if (t === undefined) return { ok: false, status: 400, message: `${FENCING_TOKEN_HEADER} must be a decimal integer in 1..2^63-1, got ${JSON.stringify(token)}` };
  const s = step === undefined ? undefined : parseFencingNumber(step as string);
  if (step !== undefined && s === undefined) return { ok: false, status: 400, message: `${FENCING_STEP_HEADER} must be a decimal integer in 1..2^63-1, got ${JSON.stringify(step)}` };
  try {
    return { ok: true, claim: checkClaim({ lock: lock as string, token: t, step: s, operationId: opId as string | undefined }) };
  } catch (err) {
    if (err instanceof FencingClaimError) return { ok: false, status: 400, message: err.message };
    throw err;
  }
}

/** The 409 answer to a refused claim: JSON body and the watermark header. */
export function refusalAnswer(r: Refusal, resource: string): { headers: Record<string, string>; body: Record<string, string> } {
  const why =
    r.status === 'STALE'
      ? `a newer holder wrote ${resource} (watermark ${r.watermark}): your token is stale`
      : r.status === 'STALE_STEP'
        ? `step ${r.lastStep} was already applied under this token on ${resource}: send a higher ${FENCING_STEP_HEADER} for a further step`
        : `${resource} is fenced by lock ${JSON.stringify(r.lock)}, not by the lock you sent`;
  const body: Record<string, string> = { error: r.status, message: why, watermark: r.watermark.toString() };
  if (r.lock !== null) body.lock = r.lock;
  if (r.status === 'STALE_STEP') body.lastStep = r.lastStep.toString();
  return { headers: { [FENCING_WATERMARK_HEADER]: r.watermark.toString() }, body };
}
