import { createHash } from 'node:crypto';

/**
 * Session ids are bearer secrets: with a session id and the (public) token, anyone could write as the holder.
 * Other clients are shown this one-way handle instead (first 16 hex chars of the id's SHA-256).
 */
export function publicSessionId(sessionId: string): string {
  return sessionId ? createHash('sha256').update(sessionId).digest('hex').slice(0, 16) : '';
}
