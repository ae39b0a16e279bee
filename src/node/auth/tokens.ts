// Bearer tokens (docs/auth.md): "flt_<id>_<secret>", a 64-bit id and a 256-bit secret drawn by the leader.
// The replicated state keeps the id, the user and SHA-256 of the secret; the secret itself is shown once.
// A random 256-bit secret needs no slow hash: its digest cannot be turned back into it.
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../api/errors';
import * as grpc from '@grpc/grpc-js';

const TOKEN_SHAPE = /^flt_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const BEARER = /^Bearer +(\S+)$/;

export interface BearerToken {
  readonly id: string;
  readonly secret: string;
}

/** What the replicated state holds of a token. */
export interface TokenRecord {
  readonly user: string;
  /** SHA-256 of the secret, 64 lowercase hex characters. */
  readonly hash: string;
}

export function secretHash(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** The token in an `authorization: Bearer ...` value; a malformed one fails UNAUTHENTICATED (never echoed). */
export function parseBearerToken(value: string): BearerToken {
  const bearer = BEARER.exec(value.trim())?.[1];
  const m = bearer === undefined ? null : TOKEN_SHAPE.exec(bearer);
  const [, id, secret] = m ?? [];
  if (id === undefined || secret === undefined) {
    throw new ApiError(grpc.status.UNAUTHENTICATED, 'authorization metadata must be "Bearer flt_<16 hex>_<43 base64url characters>", as `fencelock auth token issue` prints it');
  }
  return { id, secret };
}

export function tokenMatches(token: BearerToken, record: TokenRecord): boolean {
  const given = Buffer.from(secretHash(token.secret), 'hex');
  const stored = Buffer.from(record.hash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}

/** A new token from 40 random bytes (8 for the id, 32 for the secret). */
export function newToken(random: Uint8Array): { token: string; id: string; hash: string } {
  if (random.length !== 40) throw new Error('a token needs 40 random bytes');
  const id = Buffer.from(random.subarray(0, 8)).toString('hex');
  const secret = Buffer.from(random.subarray(8)).toString('base64url');
  return { token: `flt_${id}_${secret}`, id, hash: secretHash(secret) };
}
