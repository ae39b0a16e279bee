import * as grpc from '@grpc/grpc-js';
import { Counter, Histogram, type Registry } from 'prom-client';
import { ApiError, QUOTA_METADATA_KEY, REASON_METADATA_KEY } from '../api/errors';
import { CALL_SECONDS } from './buckets';

/** How a call arrived: its own gRPC call, or a message on a Pipeline stream. */
export type CallVia = 'unary' | 'pipeline';

/** Ends the measure of one call: with the error it was answered with, or none for OK. */
export type CallDone = (err?: unknown) => void;

/** A status code's name (OK, FAILED_PRECONDITION, ...): what operators read, and a bounded label. */
function codeName(code: grpc.status): string {
  return grpc.status[code] ?? 'UNKNOWN';
}

/** One method's series for one way of arrival, looked up once (a label lookup hashes the labels each time). */
interface MethodSeries {
  seconds: Histogram.Internal<'method' | 'via'>;
  /** By status code, as codes are first answered. */
  calls: Map<grpc.status, Counter.Internal>;
}

/**
 * The API's metrics: calls by method and status code, their latency, and the refusals they answered with
 * (by fencelock-reason, and by quota for QUOTA_EXCEEDED). Method names come from the node's own handlers,
 * never from the request, so the labels stay bounded.
 */
export class ApiMetrics {
  readonly calls: Counter<'method' | 'code' | 'via'>;
  readonly seconds: Histogram<'method' | 'via'>;
  readonly refusals: Counter<'method' | 'reason'>;
  readonly quotaRefusals: Counter<'quota'>;
  private readonly series: Record<CallVia, Map<string, MethodSeries>> = { unary: new Map(), pipeline: new Map() };

  constructor(
    registry: Registry,
    private readonly nowMs: () => number,
  ) {
    const registers = [registry];
    this.calls = new Counter({ name: 'fencelock_api_calls_total', help: 'API calls answered, by method, gRPC status code and how they arrived (unary, pipeline).', labelNames: ['method', 'code', 'via'], registers });
    this.seconds = new Histogram({ name: 'fencelock_api_call_duration_seconds', help: 'Time from a call\'s arrival to its answer (blocked Acquires included).', labelNames: ['method', 'via'], buckets: CALL_SECONDS, registers });
    this.refusals = new Counter({ name: 'fencelock_api_refusals_total', help: 'Calls refused with a fencelock-reason (NOT_LEADER, STALE_TOKEN, QUOTA_EXCEEDED, TOO_MANY_CALLS, ...), by method.', labelNames: ['method', 'reason'], registers });
    this.quotaRefusals = new Counter({ name: 'fencelock_quota_refusals_total', help: 'Calls and streams refused because an identity\'s quota was used up, by quota name.', labelNames: ['quota'], registers });
  }

  /** Starts measuring a call; the returned function ends it. */
  begin(method: string, via: CallVia): CallDone {
    const started = this.nowMs();
    const series = this.seriesOf(method, via);
    return (err) => {
      series.seconds.observe((this.nowMs() - started) / 1000);
      this.count(series, method, via, err);
    };
  }

  /** Counts an answer that took no measurable work (a call refused before it started). */
  answered(method: string, via: CallVia, err?: unknown): void {
    this.count(this.seriesOf(method, via), method, via, err);
  }

  private count(series: MethodSeries, method: string, via: CallVia, err: unknown): void {
    const apiError = err instanceof ApiError ? err : undefined;
    const code = err === undefined ? grpc.status.OK : apiError?.code ?? grpc.status.INTERNAL;
    let calls = series.calls.get(code);
    if (!calls) {
      calls = this.calls.labels({ method, code: codeName(code), via });
      series.calls.set(code, calls);
    }
    calls.inc();
    if (apiError) this.refused(method, apiError);
  }

  private seriesOf(method: string, via: CallVia): MethodSeries {
    const byMethod = this.series[via];
    let series = byMethod.get(method);
    if (!series) {
      series = { seconds: this.seconds.labels({ method, via }), calls: new Map() };
      byMethod.set(method, series);
    }
    return series;
  }

  /** Counts a refusal's reason and quota (also for stream refusals, which are not calls with a latency). */
  refused(method: string, err: ApiError): void {
    const reason = err.metadata[REASON_METADATA_KEY];
    if (reason !== undefined) this.refusals.inc({ method, reason });
    const quota = err.metadata[QUOTA_METADATA_KEY];
    if (reason === 'QUOTA_EXCEEDED' && quota !== undefined) this.quotaRefusals.inc({ quota });
  }
}
