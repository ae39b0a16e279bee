// Original file: proto/fencelock/v1/lock.proto

import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from '../../fencelock/v1/RequestHeader';
import type { Long } from '@grpc/proto-loader';

export interface OpenSessionRequest {
  'header'?: (_fencelock_v1_RequestHeader | null);
  /**
   * bounds in the README (default 3,000..300,000 ms)
   */
  'ttlMs'?: (number | string | Long);
  /**
   * informational, up to 128 bytes
   */
  'clientName'?: (string);
  /**
   * Informational key=value labels (the client library adds host and pid). Limits (README "Limits"): at most
   * 16 labels; keys 1..64 bytes of a-z 0-9 _ . -; values 0..256 UTF-8 bytes without control characters;
   * keys and values together at most 1024 bytes. Beyond: INVALID_ARGUMENT naming the limit.
   */
  'labels'?: ({[key: string]: string});
}

export interface OpenSessionRequest__Output {
  'header': (_fencelock_v1_RequestHeader__Output | null);
  /**
   * bounds in the README (default 3,000..300,000 ms)
   */
  'ttlMs': (string);
  /**
   * informational, up to 128 bytes
   */
  'clientName': (string);
  /**
   * Informational key=value labels (the client library adds host and pid). Limits (README "Limits"): at most
   * 16 labels; keys 1..64 bytes of a-z 0-9 _ . -; values 0..256 UTF-8 bytes without control characters;
   * keys and values together at most 1024 bytes. Beyond: INVALID_ARGUMENT naming the limit.
   */
  'labels': ({[key: string]: string});
}
