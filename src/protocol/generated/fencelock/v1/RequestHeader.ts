// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

/**
 * Every mutating request names its client and a per-client increasing request id. A retry with the same
 * pair returns the original result and never applies twice, across leader changes and restarts.
 */
export interface RequestHeader {
  /**
   * 1..128 UTF-8 bytes, chosen by the client (the library uses 128 random bits)
   */
  'clientId'?: (string);
  /**
   * >= 1
   */
  'requestId'?: (number | string | Long);
  /**
   * results of this client's requests below this id may be forgotten
   */
  'ackedBelow'?: (number | string | Long);
}

/**
 * Every mutating request names its client and a per-client increasing request id. A retry with the same
 * pair returns the original result and never applies twice, across leader changes and restarts.
 */
export interface RequestHeader__Output {
  /**
   * 1..128 UTF-8 bytes, chosen by the client (the library uses 128 random bits)
   */
  'clientId': (string);
  /**
   * >= 1
   */
  'requestId': (string);
  /**
   * results of this client's requests below this id may be forgotten
   */
  'ackedBelow': (string);
}
