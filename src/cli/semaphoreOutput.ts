// `fencelock describe NAME --semaphore` (issue 33): a semaphore's permits, its holders by slot, its waiters and
// each slot's latest token (docs/architecture.md#semaphores), for humans and as JSON.
import { FenceLockError, type SemaphoreDescription } from '../client';
import { clientOf, fields } from './output';

/**
 * The server answers an unknown semaphore (never used, or idle and forgotten with its tokens) as permits 0:
 * nothing to show, so NOT_FOUND (exit 5), as kv get of a missing key.
 */
export function checkSemaphoreKnown(d: SemaphoreDescription): void {
  if (d.permits > 0) return;
  throw new FenceLockError(
    'NOT_FOUND',
    `semaphore ${JSON.stringify(d.name)} not found: no permit of it is held or awaited (an idle semaphore is forgotten; its next first acquire sets its permits). For the lock of that name: describe without --semaphore`,
  );
}

/** Waiters listed one a line; the rest are counted (--json lists them all). */
const SHOWN_WAITERS = 10;

export function formatSemaphore(d: SemaphoreDescription): string {
  const lines: Array<[string, string]> = [
    ['semaphore', d.name],
    ['permits', `${d.permits} (${d.holders.length} held, ${d.permits - d.holders.length} free)`],
  ];
  for (const h of d.holders) {
    const who = h.session === null ? 'a session' : `session ${h.session.handle} ${clientOf(h.session)}`;
    const since = h.grantedAtMs > 0 ? `, granted at ${new Date(h.grantedAtMs).toISOString()}` : '';
    lines.push([`slot ${h.slot}`, `token ${h.token}, ${who}${since}`]);
  }
  lines.push(['waiters', String(d.waiters.length)]);
  d.waiters.slice(0, SHOWN_WAITERS).forEach((w, i) => lines.push([`waiter ${i + 1}`, `${w.handle} ${clientOf(w)}`]));
  if (d.waiters.length > SHOWN_WAITERS) lines.push(['', `... ${d.waiters.length - SHOWN_WAITERS} more (--json lists them all)`]);
  // A slot's latest token is its fencing watermark downstream, held or not (docs/fencing-downstream.md "Semaphores").
  lines.push(['latest tokens', d.slotTokens.length === 0 ? '-' : d.slotTokens.map((t, slot) => `slot ${slot}: ${t}`).join(', ')]);
  return fields(lines);
}

/** `describe --semaphore --json`: slots in order, sessions by public handle (never the session id). */
export function semaphoreJson(d: SemaphoreDescription): Record<string, unknown> {
  return {
    semaphore: d.name,
    permits: d.permits,
    holders: d.holders.map((h) => ({ slot: h.slot, token: h.token, session: h.session?.handle ?? '', holder: h.session, grantedAtMs: h.grantedAtMs })),
    waiters: d.waiters,
    slotTokens: d.slotTokens.map((token, slot) => ({ slot, token })),
  };
}
