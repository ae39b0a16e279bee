import * as grpc from '@grpc/grpc-js';

export const LEADER_METADATA_KEY = 'fencelock-leader';
export const REASON_METADATA_KEY = 'fencelock-reason';
export const WATERMARK_METADATA_KEY = 'fencelock-watermark';

/** An error a handler throws to answer with a gRPC status; anything else becomes INTERNAL and is logged. */
export class ApiError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
    readonly metadata: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toServiceError(): Partial<grpc.ServiceError> {
    const md = new grpc.Metadata();
    for (const [k, v] of Object.entries(this.metadata)) md.set(k, v);
    return { code: this.code, details: this.message, metadata: md };
  }
}

export const invalidArgument = (field: string, why: string): ApiError =>
  new ApiError(grpc.status.INVALID_ARGUMENT, `${field}: ${why}`);

export function notLeader(leaderAddress: string | undefined): ApiError {
  return leaderAddress
    ? new ApiError(grpc.status.UNAVAILABLE, `not the leader; retry at ${leaderAddress}`, { [LEADER_METADATA_KEY]: leaderAddress })
    : new ApiError(grpc.status.UNAVAILABLE, 'no leader is known (election in progress or this node is cut off); retry shortly');
}
