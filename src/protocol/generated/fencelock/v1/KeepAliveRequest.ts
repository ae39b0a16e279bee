// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface KeepAliveRequest {
  'sessionId'?: (string);
  /**
   * Chosen by the client, unique among the renewals on this stream (the library counts 1, 2, 3, ...); echoed
   * in the response, so that the client credits the lease from the send time of exactly the renewal that was
   * acknowledged. 0: not set.
   */
  'renewalId'?: (number | string | Long);
}

export interface KeepAliveRequest__Output {
  'sessionId': (string);
  /**
   * Chosen by the client, unique among the renewals on this stream (the library counts 1, 2, 3, ...); echoed
   * in the response, so that the client credits the lease from the send time of exactly the renewal that was
   * acknowledged. 0: not set.
   */
  'renewalId': (string);
}
