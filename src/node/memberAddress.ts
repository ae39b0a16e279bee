// What a node id and a member address may be: one rule for the config file and for Cluster.MemberAdd, so a
// member added at run time could also have been written in a config file, and the reverse.
import { isIPv6 } from 'node:net';

export const NODE_ID_RULE = '1-32 letters, digits, - or _';
const NODE_ID = /^[A-Za-z0-9_-]{1,32}$/;
const HOST_PORT = /^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/;
/** Longer than any DNS name plus a port: a bound on what a config entry may carry for each member. */
export const MAX_ADDRESS_LENGTH = 255;

export function isNodeId(id: unknown): id is string {
  return typeof id === 'string' && NODE_ID.test(id);
}

export function isHostPort(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_ADDRESS_LENGTH && HOST_PORT.test(value);
}

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(hostPort: string): boolean {
  const host = hostPort.slice(0, hostPort.lastIndexOf(':')).replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Why a member address cannot be reached by others (undefined: it can). 0.0.0.0 and [::] mean "every
 * interface" to a listener, but name no machine to dial.
 */
export function unreachableReason(hostPort: string): string | undefined {
  const colon = hostPort.lastIndexOf(':');
  const host = hostPort.slice(0, colon).replace(/^\[|\]$/g, '');
  const port = Number(hostPort.slice(colon + 1));
  if (host === '0.0.0.0' || /^[0:]+$/.test(host)) {
    return `is ${hostPort}, a bind address: others cannot reach it. Give the host name or IP others reach this member by (bind 0.0.0.0 in "listen"/"peerListen")`;
  }
  if (port < 1 || port > 65_535) return `has port ${port}; a port is 1-65535`;
  return undefined;
}

/** Why `value` cannot be a member's address (undefined: it can). */
export function memberAddressProblem(value: unknown): string | undefined {
  if (!isHostPort(value)) return `must be host:port (at most ${MAX_ADDRESS_LENGTH} characters)`;
  return unreachableReason(value);
}

/**
 * One spelling for every way of writing the same member address, so that a duplicate is found however it
 * is written: host names without case or a trailing dot, IP literals in their shortest form (127.1 is
 * 127.0.0.1, [0:0::1] is [::1]), and every loopback host (localhost, 127.0.0.0/8, ::1, ::ffff:127.x.x.x)
 * as one: a node listening on a wildcard address answers on all of them, and `localhost` may dial either
 * family. Two members on one machine's loopback therefore need different ports, as they do anyway.
 */
export function addressIdentity(hostPort: string): string {
  const colon = hostPort.lastIndexOf(':');
  const host = canonicalHost(hostPort.slice(0, colon));
  const port = Number(hostPort.slice(colon + 1));
  return `${isLoopbackHost(host) ? 'loopback' : host}:${port}`;
}

/** Two addresses name the same listener (see addressIdentity). */
export function sameMemberAddress(a: string, b: string): boolean {
  return addressIdentity(a) === addressIdentity(b);
}

function canonicalHost(host: string): string {
  const bare = host.replace(/^\[|\]$/g, '');
  // The URL parser writes IP literals in their shortest form and lowercases names.
  const literal = isIPv6(bare) ? `[${bare}]` : host;
  try {
    return new URL(`http://${literal}/`).hostname.replace(/\.$/, '');
  } catch {
    return host.toLowerCase();
  }
}

function isLoopbackHost(canonical: string): boolean {
  return canonical === 'localhost' || canonical === '[::1]' || /^127\./.test(canonical) || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(canonical);
}
