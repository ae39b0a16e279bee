// A server certificate the client cannot verify is a mistake in configuration, not a passing outage: retrying
// for the whole budget (10 s by default) only hides it behind "No connection established". Such an attempt
// ends the call at once, with the CA trusted, where it came from, and how to point the client at the right one.
import { UNTRUSTED_CA_FIX } from './credentials';
import { FenceLockError } from './errors';

/** Node's words for a chain that does not end at a trusted CA (OpenSSL's verify errors). */
const UNTRUSTED_CA = /self[- ]signed certificate|unable to verify the first certificate|unable to get (?:local )?issuer certificate|certificate signature failure/i;
/** The certificate chains to a trusted CA but names another host than the one dialled. */
const WRONG_HOST = /Hostname\/IP does not match certificate's altnames|ERR_TLS_CERT_ALTNAME_INVALID/;

export type CertificateProblem = 'untrusted-ca' | 'wrong-host';

/** What is wrong with the server's certificate, judging by the connection error grpc-js reports (or undefined). */
export function certificateProblem(err: FenceLockError): CertificateProblem | undefined {
  if (err.code !== 'UNAVAILABLE') return undefined;
  const details = err.details ?? '';
  if (UNTRUSTED_CA.test(details)) return 'untrusted-ca';
  if (WRONG_HOST.test(details)) return 'wrong-host';
  return undefined;
}

/** The TLS library's own words inside grpc-js's "No connection established. Last error: Error: X (date)". */
function tlsCause(details: string): string {
  const m = /Last error: (?:Error: )?(.*?)(?: \(\d{4}-[^)]*\))?\.?\s*(?:Resolution note:.*)?$/s.exec(details);
  return (m?.[1] ?? details).trim();
}

/**
 * The final error of a call whose attempt at `endpoint` failed certificate verification. `trust` says which CAs
 * were trusted and where they came from (ResolvedCredentials.trust). Reason UNTRUSTED_CERTIFICATE.
 */
export function untrustedCertificateError(what: string, endpoint: string, err: FenceLockError, problem: CertificateProblem, trust: string, indeterminate: boolean): FenceLockError {
  const cause = tlsCause(err.details ?? '');
  const message =
    problem === 'untrusted-ca'
      ? `${what}: the TLS certificate of ${endpoint} is not signed by a CA this client trusts (${cause}); it trusts ${trust}; ${UNTRUSTED_CA_FIX}`
      : `${what}: the TLS certificate of ${endpoint} does not name the host dialled (${cause}); dial the node by a name or address its certificate carries, or set the library's tls.serverName`;
  return new FenceLockError('UNAVAILABLE', message, {
    reason: 'UNTRUSTED_CERTIFICATE',
    details: err.details,
    indeterminate,
    endpointErrors: [{ endpoint, error: err }],
    cause: err,
  });
}
