// Who a certificate says it is. Identities are URI subject alternative names (see docs/security.md):
// a node is urn:fencelock:node:<id>, a client urn:fencelock:client:<name>.
import type { PeerCertificate } from 'node:tls';

const NODE_PREFIX = 'urn:fencelock:node:';
export const CLIENT_PREFIX = 'urn:fencelock:client:';

export function nodeIdentityUri(id: string): string {
  return NODE_PREFIX + id;
}

export function clientIdentityUri(name: string): string {
  return CLIENT_PREFIX + name;
}

/** The URI SANs of a certificate, from Node's `subjectaltname` text ("DNS:a, URI:urn:..., IP Address:..."). */
export function uriNames(cert: Pick<PeerCertificate, 'subjectaltname'> | undefined): string[] {
  const text = cert?.subjectaltname;
  if (!text) return [];
  return text
    .split(/,\s*/)
    .filter((part) => part.startsWith('URI:'))
    .map((part) => part.slice('URI:'.length));
}

/** The node id a certificate names, or undefined when it names none or more than one. */
export function nodeIdOf(cert: Pick<PeerCertificate, 'subjectaltname'> | undefined): string | undefined {
  const ids = uriNames(cert)
    .filter((u) => u.startsWith(NODE_PREFIX))
    .map((u) => u.slice(NODE_PREFIX.length));
  return ids.length === 1 ? ids[0] : undefined;
}
