// check-resource against an HTTP endpoint behind the fencing middleware or `fencelock proxy`: each write is
// one request with the headers the client's lock.fencing.headers() builds, plus Idempotency-Key.
import * as net from 'node:net';
import { FENCING_REPLAYED_HEADER, FENCING_WATERMARK_HEADER, fencingHeaders, IDEMPOTENCY_KEY_HEADER } from '../http/headers';
import type { CheckedClaim } from '../token';
import { ResourceNotReady, type CheckTarget, type WriteOutcome } from './target';

export interface HttpTargetOptions {
  /** The dedicated resource's URL, e.g. http://127.0.0.1:8080/accounts/check. */
  url: string;
  /** Default POST. */
  method?: string;
  /** The body of every write (default `{}`), sent as `contentType`. */
  body?: string;
  contentType?: string;
  /**
   * `middleware` (default) stores each applied answer and replays it for a retry; `proxy` stores none and
   * refuses a retry STALE_STEP (docs/fencing-downstream.md, section 4).
   */
  behind?: 'middleware' | 'proxy';
  /** Per request; default 10 s. */
  timeoutMs?: number;
}

const REFUSALS = new Set(['STALE', 'STALE_STEP', 'WRONG_LOCK']);

function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RangeError(`--http: ${JSON.stringify(text)} is not a URL (http://host:port/path)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RangeError(`--http: ${JSON.stringify(text)} is not an http:// or https:// URL`);
  return url;
}

export class HttpTarget implements CheckTarget {
  readonly kind = 'http';
  readonly resource: string;
  readonly storesAnswers: boolean;
  private readonly url: URL;

  constructor(private readonly o: HttpTargetOptions) {
    this.url = parseUrl(o.url);
    this.storesAnswers = (o.behind ?? 'middleware') === 'middleware';
    this.resource = `${(o.method ?? 'POST').toUpperCase()} ${this.url.href} (behind the ${o.behind ?? 'middleware'})`;
  }

  /** Opens and closes a TCP connection: sends no request, so nothing is written before the checks. */
  prepare(): Promise<void> {
    const port = Number(this.url.port || (this.url.protocol === 'https:' ? 443 : 80));
    const host = this.url.hostname.replace(/^\[|\]$/g, '');
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port });
      socket.setTimeout(this.o.timeoutMs ?? 10_000, () => socket.destroy(new Error('timed out')));
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', (err) => reject(new ResourceNotReady(`cannot connect to ${host}:${port}: ${err.message}`, true)));
    });
  }

  async write(claim: CheckedClaim): Promise<WriteOutcome> {
    const res = await this.send(claim);
    const text = await res.text();
    if (res.status >= 200 && res.status < 300) {
      return { status: res.headers.get(FENCING_REPLAYED_HEADER) === 'true' ? 'REPLAYED' : 'APPLIED', detail: `HTTP ${res.status}` };
    }
    const error = errorOf(text);
    if (res.status === 409 && error !== undefined && REFUSALS.has(error)) {
      const mark = res.headers.get(FENCING_WATERMARK_HEADER);
      return { status: error as WriteOutcome['status'], detail: `HTTP 409${mark === null ? '' : `, watermark ${mark}`}` };
    }
    return { status: 'OTHER', detail: `HTTP ${res.status}${error === undefined ? '' : ` ${error}`}: ${text.slice(0, 200)}` };
  }

  /** One request; fetch's own error says only "fetch failed", so its cause (ECONNRESET, a timeout) goes into the message. */
  private async send(claim: CheckedClaim): Promise<Response> {
    try {
      return await fetch(this.url, {
        method: (this.o.method ?? 'POST').toUpperCase(),
        headers: {
          ...fencingHeaders(claim.lock, claim.token, claim.step),
          [IDEMPOTENCY_KEY_HEADER]: claim.operationId,
          'content-type': this.o.contentType ?? 'application/json',
        },
        body: this.o.body ?? '{}',
        signal: AbortSignal.timeout(this.o.timeoutMs ?? 10_000),
      });
    } catch (err) {
      const cause = (err as { cause?: { message?: string } }).cause?.message;
      throw new Error(`${(err as Error).message}${cause ? `: ${cause}` : ''}`);
    }
  }

  async close(): Promise<void> {}
}

/** The `error` field of a JSON answer, if any. */
function errorOf(text: string): string | undefined {
  try {
    const v = JSON.parse(text) as { error?: unknown };
    return typeof v?.error === 'string' ? v.error : undefined;
  } catch {
    return undefined;
  }
}
