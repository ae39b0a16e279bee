// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface OpenSessionResponse {
  /**
   * 32 hex characters (128 random bits chosen by the leader)
   */
  'sessionId'?: (string);
  'ttlMs'?: (number | string | Long);
  /**
   * The cluster's election timeout (election_ticks x tick_ms): how long a deposed leader may still
   * acknowledge renewals. The client's safety margin is derived from it (README "Guarantees").
   */
  'electionTimeoutMs'?: (number | string | Long);
}

export interface OpenSessionResponse__Output {
  /**
   * 32 hex characters (128 random bits chosen by the leader)
   */
  'sessionId': (string);
  'ttlMs': (string);
  /**
   * The cluster's election timeout (election_ticks x tick_ms): how long a deposed leader may still
   * acknowledge renewals. The client's safety margin is derived from it (README "Guarantees").
   */
  'electionTimeoutMs': (string);
}
