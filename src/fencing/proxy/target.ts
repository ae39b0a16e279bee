// The request target the proxy judges must be the one the service will act on (design promise 9: a resource's identity is the resource's own). Rather
// than guess how a service normalises a path, the proxy forwards only targets that are already in the one
// canonical spelling RFC 3986 normalisation cannot change, and refuses every other spelling (400).
// docs/fencing-downstream.md, "Canonical request targets", states the rule and what the service must agree to.

/** A canonical origin-form target's path segments (none empty; a trailing slash dropped), or why it is not one. */
export type CanonicalTarget = { ok: true; segments: string[] } | { ok: false; message: string };

// What a path segment may hold literally: RFC 3986 unreserved characters, sub-delims except ";" (servlet
// containers strip ";params" from segments), ":" and "@". A byte that may stand as itself must (a service that
// decodes the path would read "%3A" and ":" alike); every other byte must be percent-encoded, and some not even so.
const SEGMENT_CHAR = /^[A-Za-z0-9\-._~!$&'()*+,=:@%]$/;
// The query is forwarded as is and is not part of the resource; it only has to be plain printable ASCII.
const QUERY = /^[\x21-\x7e]*$/;

/** Why a percent-encoded byte must not appear in a path, or undefined when it may. */
function encodedByteProblem(hex: string): string | undefined {
  if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return `"%${hex}" is not a percent-encoded byte`;
  if (hex !== hex.toUpperCase()) return `"%${hex}" must be written "%${hex.toUpperCase()}" (percent-encoding is upper case)`;
  const ch = String.fromCharCode(parseInt(hex, 16));
  if (ch !== '%' && SEGMENT_CHAR.test(ch)) return `"%${hex}" encodes "${ch}", which must be written as itself`;
  if (ch === '/' || ch === '\\') return `"%${hex}" encodes a path separator: a service decoding it would see other segments`;
  if (ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f) return `"%${hex}" encodes a control character`;
  return undefined;
}

function segmentProblem(seg: string): string | undefined {
  if (seg === '') return 'it has an empty path segment ("//"): a service may merge the slashes or read a host name';
  if (seg === '.' || seg === '..') return `it has a dot segment ("${seg}")`;
  for (let i = 0; i < seg.length; i++) {
    const ch = seg.charAt(i);
    if (!SEGMENT_CHAR.test(ch)) return ch === ';' ? 'it has ";" in a path segment (some services strip ";parameters")' : `it has ${JSON.stringify(ch)} in the path unencoded`;
    if (ch === '%') {
      const problem = encodedByteProblem(seg.slice(i + 1, i + 3));
      if (problem) return problem;
      i += 2;
    }
  }
  return undefined;
}

/**
 * Checks a raw request target (req.url as it came off the wire). Only origin-form ("/path?query") passes:
 * absolute-form ("http://host/path") and the others are refused, since a reverse proxy's clients never need them.
 * A single trailing slash is allowed and names the same resource as the path without it.
 */
export function canonicalTarget(raw: string): CanonicalTarget {
  const refuse = (why: string): CanonicalTarget => ({ ok: false, message: `request target ${JSON.stringify(raw)} is not canonical: ${why}; the proxy forwards only canonical targets (docs/fencing-downstream.md)` });
  if (!raw.startsWith('/')) return refuse('only origin-form targets ("/path") are accepted');
  if (raw.includes('#')) return refuse('it has a fragment ("#")');
  const q = raw.indexOf('?');
  const pathPart = q < 0 ? raw : raw.slice(0, q);
  if (q >= 0 && !QUERY.test(raw.slice(q + 1))) return refuse('its query has characters outside printable ASCII');
  if (pathPart === '/') return { ok: true, segments: [] };
  const body = pathPart.endsWith('/') ? pathPart.slice(1, -1) : pathPart.slice(1);
  const segments = body.split('/');
  for (const seg of segments) {
    const problem = segmentProblem(seg);
    if (problem) return refuse(problem);
  }
  return { ok: true, segments };
}
