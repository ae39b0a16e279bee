// Who is calling (docs/auth.md "Identities"): a bearer token when the call sends one, else the client
// certificate's name, else nobody (then the peer address stands in for quotas when auth is off).
import * as grpc from '@grpc/grpc-js';
import type { PeerCertificate } from 'node:tls';
import { CLIENT_PREFIX, uriNames } from '../../certs/identity';
import { isUserName } from '../../state/auth/names';
import { ApiError } from '../api/errors';
import { parseBearerToken, tokenMatches, type TokenRecord } from './tokens';

export type CallerVia = 'certificate' | 'token' | 'address' | 'none';

/** The identity a call acts as, stamped into the commands it proposes. */
export interface Caller {
  /** A user name (certificate, token), `address:IP` (no identity, auth off), or '' (none known). */
  readonly identity: string;
  readonly via: CallerVia;
  /** The id of the token the call came with: the state machine refuses it once the token is revoked. */
  readonly tokenId?: string;
}

const unauthenticated = (why: string): ApiError => new ApiError(grpc.status.UNAUTHENTICATED, why);

/** A well-formed token this node has no record of (or whose secret does not match): UNAUTHENTICATED. */
export class UnknownTokenError extends ApiError {
  constructor(tokenId: string) {
    super(grpc.status.UNAUTHENTICATED, `token ${tokenId} is unknown or revoked; ask an admin for a new one (fencelock auth token issue USER)`);
  }
}

export const NO_CALLER: Caller = Object.freeze({ identity: '', via: 'none' });

/** What a call offers to identify it. */
export interface CallCredentials {
  /** Values of the `authorization` metadata. */
  authorization: string[];
  certificate: PeerCertificate | undefined;
  /** The peer as grpc-js names it: "ipv4:1.2.3.4:5678", "ipv6:[::1]:5678", ... */
  peer: string;
}

/** What identifying a call reads of it (every kind of server call has these). */
export type IdentifiableCall = Pick<grpc.ServerUnaryCall<unknown, unknown>, 'metadata' | 'getPeer' | 'getAuthContext'>;

export function credentialsOf(call: IdentifiableCall): CallCredentials {
  const authorization = call.metadata.get('authorization').map((v: string | Buffer) => (typeof v === 'string' ? v : v.toString('utf8')));
  const certificate = call.getAuthContext()?.sslPeerCertificate;
  return { authorization, certificate: certificate && Object.keys(certificate).length > 0 ? certificate : undefined, peer: call.getPeer() };
}

/**
 * The caller of a call; UNAUTHENTICATED for credentials that are present but not good: a token that
 * is malformed, unknown or revoked, or a certificate that names no valid identity. `lookupToken` reads the
 * replicated token records.
 */
export function identify(creds: CallCredentials, lookupToken: (id: string) => TokenRecord | undefined): Caller {
  if (creds.authorization.length > 0) return byToken(creds.authorization, lookupToken);
  if (creds.certificate !== undefined) return byCertificate(creds.certificate);
  return { identity: addressIdentity(creds.peer), via: 'address' };
}

function byToken(values: string[], lookupToken: (id: string) => TokenRecord | undefined): Caller {
  const [value] = values;
  if (values.length !== 1 || value === undefined) throw unauthenticated('send one authorization metadata entry, "Bearer <token>"');
  const token = parseBearerToken(value);
  const record = lookupToken(token.id);
  if (record === undefined || !tokenMatches(token, record)) throw new UnknownTokenError(token.id);
  return { identity: record.user, via: 'token', tokenId: token.id };
}

/** The URI SAN urn:fencelock:client:NAME, else the subject CN (docs/auth.md). */
export function certificateName(cert: PeerCertificate): string | undefined {
  const names = uriNames(cert).filter((u) => u.startsWith(CLIENT_PREFIX)).map((u) => u.slice(CLIENT_PREFIX.length));
  if (names.length > 1) return undefined;
  if (names.length === 1) return names[0];
  const cn = cert.subject?.CN;
  return typeof cn === 'string' ? cn : undefined;
}

function byCertificate(cert: PeerCertificate): Caller {
  const name = certificateName(cert);
  if (name === undefined || !isUserName(name)) {
    throw unauthenticated('the client certificate names no valid identity: it needs one URI SAN urn:fencelock:client:NAME (or a subject CN) of 1-128 letters, digits, ., _, @ or -');
  }
  return { identity: name, via: 'certificate' };
}

/** "address:IP" from grpc-js's peer text; IPv4-mapped IPv6 addresses count as their IPv4 address. */
export function addressIdentity(peer: string): string {
  const m = /^(?:ipv4:|ipv6:)?\[?([^\]]*?)\]?(?::\d+)?$/.exec(peer);
  const host = (m?.[1] ?? peer).replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
  return `address:${host}`;
}

