import { createHash } from 'node:crypto';

/**
 * Session ids are bearer secrets (with the id and the public token anyone could write as the holder), so the
 * server shows other clients a one-way handle instead: the first 16 hex characters of the id's SHA-256. This is
 * what Describe (holder_session, waiters), Watch (session_id) and a refused try-acquire (holder_session) carry.
 */
export function publicSessionId(sessionId: string): string {
  return sessionId ? createHash('sha256').update(sessionId).digest('hex').slice(0, 16) : '';
}
