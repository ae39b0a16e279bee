// Why a call found no leader, in words a person can act on: which nodes answered (by id) and why each
// other one did not (refused, timed out, TLS), instead of grpc-js's "No connection established. Last
// error: ... Resolution note:" of whichever endpoint happened to be tried last.
import { FenceLockError, type EndpointError, type FenceLockClient } from '../client';

/** What became of one endpoint. `answered`: a node spoke gRPC back (it may still have refused the call). */
export type EndpointFate = 'answered' | 'refused' | 'timed out' | 'tls' | 'unresolved' | 'unreachable';

export interface EndpointReport {
  endpoint: string;
  fate: EndpointFate;
  /** The node's id, for an endpoint that answered a status call. */
  node?: string;
  /** A short cause: the server's refusal, the TLS library's words, the socket error. */
  detail: string;
}

/** A call that gave up, re-worded with a line per endpoint; code, reason and exit code stay the original's. */
export class UnreachableError extends FenceLockError {
  constructor(
    message: string,
    original: FenceLockError,
    readonly endpoints: EndpointReport[],
  ) {
    super(original.code, message, { reason: original.reason, leader: original.leader, details: original.details, indeterminate: original.indeterminate, cause: original });
    this.name = 'UnreachableError';
  }
}

/** grpc-js's own cause inside "No connection established. Last error: X. Resolution note: ...". */
function socketCause(details: string): string {
  const m = /Last error: (?:Error: )?(.*?)(?: \(\d{4}-[^)]*\))?\.?\s*(?:Resolution note:.*)?$/s.exec(details);
  const cause = (m?.[1] ?? details).trim();
  // OpenSSL's "802C...:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/...": the words.
  const ssl = /SSL routines:[^:]*:([^:]+)/.exec(cause);
  return ssl?.[1] ?? cause;
}

/**
 * A message with grpc-js's connection wording taken out ("No connection established. Last error: Error: X
 * (date). Resolution note: ..."): X stays, the rest (which ends in a dangling "Resolution note: ") goes. For
 * messages quoted inside a sentence of the CLI's own, such as a warning.
 */
export function withoutGrpcNoise(message: string): string {
  return message
    .replace(/No connection established\. Last error: (?:Error: )?/g, '')
    .replace(/ \(\d{4}-\d\d-\d\dT[^)]*\)/g, '')
    .replace(/\.?\s*Resolution note:[^;)]*/g, '')
    .trim();
}

const TLS_WORDS = /SSL|TLS|certificate|handshake|self[- ]signed|Protocol error|ERR_TLS/i;

/** Classifies the last error an endpoint gave. */
export function endpointFate(err: FenceLockError): { fate: EndpointFate; detail: string } {
  const details = err.details ?? '';
  const connecting = /No connection established|ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|DNS resolution failed|Waiting for LB pick/.test(details);
  // grpc-js names remote_addr once the call went out on a connection: the node is there, only slow to answer.
  if (err.code === 'DEADLINE_EXCEEDED' && !/remote_addr=/.test(details) && (connecting || details.startsWith('Deadline exceeded'))) {
    return { fate: 'timed out', detail: 'no answer in time' };
  }
  if (!connecting) return { fate: 'answered', detail: err.reason ?? err.code };
  const cause = socketCause(details);
  if (/ECONNREFUSED/.test(cause)) return { fate: 'refused', detail: 'connection refused' };
  if (/ENOTFOUND|EAI_AGAIN|DNS resolution failed/.test(details)) return { fate: 'unresolved', detail: cause };
  if (TLS_WORDS.test(cause)) return { fate: 'tls', detail: cause };
  return { fate: 'unreachable', detail: cause };
}

/** "refused connections", "did not answer in time", ... for a group of endpoints (plural) or one. */
function fateWords(fate: EndpointFate, many: boolean): string {
  switch (fate) {
    case 'refused':
      return many ? 'refused connections' : 'refused the connection';
    case 'timed out':
      return 'did not answer in time';
    case 'tls':
      return 'failed the TLS handshake';
    case 'unresolved':
      return many ? 'have names that do not resolve' : 'has a name that does not resolve';
    case 'unreachable':
      return 'could not be reached';
    case 'answered':
      return 'answered';
  }
}

/** The sentence about the endpoints that did not answer. */
function othersSentence(down: EndpointReport[], up: number, total: number): string {
  if (down.length === 0) return '';
  const fates = new Set(down.map((r) => r.fate));
  const details = (r: EndpointReport): string => (r.fate === 'tls' || r.fate === 'unreachable' || r.fate === 'unresolved' ? `: ${r.detail}` : '');
  const [only] = fates;
  // "all" / "the others" only when every endpoint was tried; otherwise name each one.
  if (fates.size === 1 && only !== undefined && up + down.length === total) {
    const who = total === 1 ? 'it' : up === 0 ? 'all' : 'the others';
    const causes = [...new Set(down.map(details))].filter((d) => d !== '').join(';');
    return `${who} ${fateWords(only, down.length > 1)} (${down.map((r) => r.endpoint).join(', ')}${causes})`;
  }
  return down.map((r) => `${r.endpoint} ${fateWords(r.fate, false)}${details(r)}`).join(', ');
}

/** The summary line: "no leader: 1 of 3 nodes reachable (n1); the others refused connections (...)". */
export function summarize(reports: EndpointReport[], total: number): string {
  const up = reports.filter((r) => r.fate === 'answered');
  const down = reports.filter((r) => r.fate !== 'answered');
  const untried = total - reports.length;
  // Every node that answered refused for want of a leader (or none answered): then there is no leader to be had.
  const head = up.every((r) => r.detail === 'NOT_LEADER') ? 'no leader' : 'no answer in time';
  let text = `${head}: ${up.length} of ${total} node${total === 1 ? '' : 's'} reachable`;
  if (up.length > 0) text += ` (${up.map((r) => r.node ?? r.endpoint).join(', ')})`;
  const others = othersSentence(down, up.length, total);
  if (others !== '') text += `; ${others}`;
  if (untried > 0) text += `; ${untried} not tried in time`;
  return text;
}

/**
 * When `err` is a call that gave up (it carries per-endpoint errors), an UnreachableError saying what
 * each endpoint did; the ids of the nodes that answered come from a status call each. Otherwise `err`.
 * `what`: the operation to name in place of the call's own ("watch lock ..." for its status probe).
 */
export async function explainUnreachable(client: FenceLockClient, err: unknown, timeoutMs: number, what?: string, trust?: string): Promise<unknown> {
  if (!(err instanceof FenceLockError) || err.endpointErrors === undefined || err.endpointErrors.length === 0) return err;
  if (err.reason === 'UNTRUSTED_CERTIFICATE') return trust === undefined ? err : withCliTrust(err, trust);
  if (err.code !== 'UNAVAILABLE' && err.code !== 'DEADLINE_EXCEEDED') return err;
  const reports = await Promise.all(err.endpointErrors.map((e) => report(client, e)));
  what ??= /^(.*?): gave up after /s.exec(err.message)?.[1];
  const advice = reports.some((r) => r.fate === 'answered') ? '' : '. Is the cluster running, and are --endpoints (FENCELOCK_ENDPOINTS) right?';
  const message = `${what !== undefined ? `${what}: ` : ''}${summarize(reports, client.endpoints().length)}; gave up after ${timeoutMs} ms (--timeout)${advice}`;
  return new UnreachableError(message, err, reports);
}

async function report(client: FenceLockClient, e: EndpointError): Promise<EndpointReport> {
  const { fate, detail } = endpointFate(e.error);
  if (fate !== 'answered') return { endpoint: e.endpoint, fate, detail };
  const node = await client.status(e.endpoint).then(
    (s) => s.id,
    () => undefined,
  );
  return { endpoint: e.endpoint, fate, detail, ...(node !== undefined && node !== '' ? { node } : {}) };
}

/**
 * The library names the CA as its tls option (the CLI hands it the file); say which flag, variable or file
 * it came from instead (`trust`: ClientSecurity.trust).
 */
function withCliTrust(err: FenceLockError, trust: string): FenceLockError {
  const message = err.message.replace(/; it trusts .*?; point the client/s, `; it trusts ${trust}; point the client`);
  return new FenceLockError(err.code, message, { reason: err.reason, details: err.details, indeterminate: err.indeterminate, endpointErrors: err.endpointErrors, cause: err.cause });
}
