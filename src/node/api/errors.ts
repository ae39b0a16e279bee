import * as grpc from '@grpc/grpc-js';
import { META_LEADER, META_REASON } from '../../protocol/metadata';
import type { ApiReason, Reason } from '../../protocol/reasons';

// The metadata keys and reasons are the protocol's (src/protocol), shared with the client; the server's names.
export {
  META_LEADER as LEADER_METADATA_KEY,
  META_REASON as REASON_METADATA_KEY,
  META_WATERMARK as WATERMARK_METADATA_KEY,
  META_KEY as KEY_METADATA_KEY,
  META_KEY_LOCK as KEY_LOCK_METADATA_KEY,
  META_QUOTA as QUOTA_METADATA_KEY,
  META_DELAYED_UNTIL as DELAYED_UNTIL_METADATA_KEY,
} from '../../protocol/metadata';

/** The metadata of a refusal for `reason`, typed so that the server only sends reasons the protocol lists. */
export function reasonMetadata(reason: Reason | ApiReason, extra: Record<string, string> = {}): Record<string, string> {
  return { [META_REASON]: reason, ...extra };
}

/**
 * Text as a metadata value: gRPC allows only printable ASCII there, and keys and lock names are any UTF-8.
 * Percent-encoded as grpc-message is (every UTF-8 byte outside printable ASCII, and %, as %XX), so ASCII
 * names stay readable and the value fits the Pipeline stream's string map as it is.
 */
export function metadataText(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    out += b >= 0x20 && b <= 0x7e && b !== 0x25 ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

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

/** A node that does not lead refuses a call before anything of it is proposed: reason NOT_LEADER. */
export function notLeader(leaderAddress: string | undefined): ApiError {
  return leaderAddress
    ? new ApiError(grpc.status.UNAVAILABLE, `not the leader; retry at ${leaderAddress}`, reasonMetadata('NOT_LEADER', { [META_LEADER]: leaderAddress }))
    : new ApiError(grpc.status.UNAVAILABLE, 'no leader is known (election in progress or this node is cut off); retry shortly', reasonMetadata('NOT_LEADER'));
}
