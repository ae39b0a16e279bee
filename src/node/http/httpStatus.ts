// A gRPC status as an HTTP answer (docs/http.md "Errors"): the status code from one table, and a JSON body
// with everything a gRPC caller would get (code, message, reason and the rest of the metadata).
import * as grpc from '@grpc/grpc-js';
import { META_LEADER, META_REASON } from '../../protocol/metadata';

const HTTP_STATUS: Record<grpc.status, number> = {
  [grpc.status.OK]: 200,
  [grpc.status.CANCELLED]: 499,
  [grpc.status.UNKNOWN]: 500,
  [grpc.status.INVALID_ARGUMENT]: 400,
  [grpc.status.DEADLINE_EXCEEDED]: 504,
  [grpc.status.NOT_FOUND]: 404,
  [grpc.status.ALREADY_EXISTS]: 409,
  [grpc.status.PERMISSION_DENIED]: 403,
  [grpc.status.RESOURCE_EXHAUSTED]: 429,
  // A refusal of the state as it is (stale token, lock not held, lock delayed): the request conflicts with
  // the resource's state, which is 409's meaning; 412 is about the request's own If-* headers.
  [grpc.status.FAILED_PRECONDITION]: 409,
  [grpc.status.ABORTED]: 409,
  [grpc.status.OUT_OF_RANGE]: 400,
  [grpc.status.UNIMPLEMENTED]: 501,
  [grpc.status.INTERNAL]: 500,
  [grpc.status.UNAVAILABLE]: 503,
  [grpc.status.DATA_LOSS]: 500,
  [grpc.status.UNAUTHENTICATED]: 401,
};

export function httpStatusOf(code: grpc.status): number {
  return HTTP_STATUS[code] ?? 500;
}

/** The JSON body of an error answer (and of an SSE `error` event). */
export interface ErrorBody {
  /** The gRPC status code, as a number. */
  code: number;
  /** Its name: "FAILED_PRECONDITION". */
  status: string;
  message: string;
  /** The fencelock-reason metadata ("STALE_TOKEN"), '' when there is none. */
  reason: string;
  /** Every other metadata value (fencelock-watermark, fencelock-leader, ...). */
  metadata: Record<string, string>;
}

export function errorBody(err: Partial<grpc.ServiceError>): ErrorBody {
  const code = err.code ?? grpc.status.UNKNOWN;
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(err.metadata?.getMap() ?? {})) {
    if (key !== META_REASON) metadata[key] = typeof value === 'string' ? value : value.toString('base64');
  }
  const reason = err.metadata?.get(META_REASON)[0];
  return { code, status: grpc.status[code] ?? 'UNKNOWN', message: err.details ?? err.message ?? '', reason: typeof reason === 'string' ? reason : '', metadata };
}

/** The leader's client address a NOT_LEADER refusal names, if any. */
export function leaderHint(body: ErrorBody): string | undefined {
  return body.metadata[META_LEADER];
}
