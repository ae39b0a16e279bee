// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface SnapshotHeader {
  /**
   * the applied log index the state is of
   */
  'index'?: (number | string | Long);
  /**
   * the term of that entry
   */
  'term'?: (number | string | Long);
  /**
   * bytes of data that follow
   */
  'size'?: (number | string | Long);
  /**
   * SHA-256 of those bytes
   */
  'sha256'?: (Buffer | Uint8Array | string);
  /**
   * the cluster's members when it was taken (informational)
   */
  'voters'?: (string)[];
}

export interface SnapshotHeader__Output {
  /**
   * the applied log index the state is of
   */
  'index': (string);
  /**
   * the term of that entry
   */
  'term': (string);
  /**
   * bytes of data that follow
   */
  'size': (string);
  /**
   * SHA-256 of those bytes
   */
  'sha256': (Buffer);
  /**
   * the cluster's members when it was taken (informational)
   */
  'voters': (string)[];
}
