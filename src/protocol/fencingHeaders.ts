// The HTTP convention for fencing tokens: what a writer sends and what a fenced service answers. In the
// protocol leaf module, so that the client library builds the headers without the server-side helpers.

/** The writer's fencing token, decimal (1..2^63-1). */
export const FENCING_TOKEN_HEADER = 'Fencing-Token';
/** The lock the token belongs to. */
export const FENCING_LOCK_HEADER = 'Fencing-Lock';
/** Optional: the step of the holder's work under this token (default 1); see FencingClaim.step. */
export const FENCING_STEP_HEADER = 'Fencing-Step';
/** Optional: names the operation, so that a retry gets the stored response (default `step-<step>`). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** In a 409 answer: the resource's current watermark. */
export const FENCING_WATERMARK_HEADER = 'Fencing-Watermark';
/** `true` on a stored response replayed for a retry. */
export const FENCING_REPLAYED_HEADER = 'Fencing-Replayed';

/** The request headers for a write under (lock, token), optionally a later step of the same grant. */
export function fencingHeaders(lock: string, token: bigint, step?: bigint): Record<string, string> {
  const h: Record<string, string> = { [FENCING_TOKEN_HEADER]: token.toString(), [FENCING_LOCK_HEADER]: lock };
  if (step !== undefined) h[FENCING_STEP_HEADER] = step.toString();
  return h;
}

/**
 * The resource downstream services fence a semaphore's permit on: one per (semaphore, slot), spelled
 * `SEMAPHORE#SLOT` with the slot in decimal. The kit sends it as Fencing-Lock. A lock may carry the same
 * name (lock names are free text): the two then share one downstream watermark. That is still safe, since
 * every token is a log index of one cluster and a shared watermark only refuses more, but each can fence the
 * other out (docs/fencing-downstream.md#semaphores).
 */
export function slotResource(semaphore: string, slot: number): string {
  return `${semaphore}#${slot}`;
}

const SLOT_RESOURCE = /^([\s\S]+)#(0|[1-9][0-9]{0,3})$/;

/** The (semaphore, slot) a resource names when it is spelled as slotResource spells one; undefined otherwise. */
export function parseSlotResource(resource: string): { semaphore: string; slot: number } | undefined {
  const m = SLOT_RESOURCE.exec(resource);
  return m === null ? undefined : { semaphore: m[1] as string, slot: Number(m[2]) };
}
