// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface KeyValue {
  'key'?: (string);
  /**
   * empty for a deleted key
   */
  'value'?: (Buffer | Uint8Array | string);
  /**
   * the key's watermark
   */
  'token'?: (number | string | Long);
  /**
   * the lock the key belongs to
   */
  'lock'?: (string);
  'deleted'?: (boolean);
  /**
   * as in GetResponse: bound to slot `slot` of the semaphore `lock`
   */
  'semaphore'?: (boolean);
  'slot'?: (number);
}

export interface KeyValue__Output {
  'key': (string);
  /**
   * empty for a deleted key
   */
  'value': (Buffer);
  /**
   * the key's watermark
   */
  'token': (string);
  /**
   * the lock the key belongs to
   */
  'lock': (string);
  'deleted': (boolean);
  /**
   * as in GetResponse: bound to slot `slot` of the semaphore `lock`
   */
  'semaphore': (boolean);
  'slot': (number);
}
