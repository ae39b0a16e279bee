// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface GetResponse {
  /**
   * the key has a value
   */
  'found'?: (boolean);
  'value'?: (Buffer | Uint8Array | string);
  /**
   * the key's watermark: token of the last write that touched it; 0 if never written
   */
  'token'?: (number | string | Long);
  /**
   * the lock the key belongs to; '' if never written
   */
  'lock'?: (string);
  /**
   * the key was deleted (found is false; lock and token are still the key's)
   */
  'deleted'?: (boolean);
  /**
   * the key is bound to slot `slot` of the semaphore `lock` (issue 33)
   */
  'semaphore'?: (boolean);
  'slot'?: (number);
}

export interface GetResponse__Output {
  /**
   * the key has a value
   */
  'found': (boolean);
  'value': (Buffer);
  /**
   * the key's watermark: token of the last write that touched it; 0 if never written
   */
  'token': (string);
  /**
   * the lock the key belongs to; '' if never written
   */
  'lock': (string);
  /**
   * the key was deleted (found is false; lock and token are still the key's)
   */
  'deleted': (boolean);
  /**
   * the key is bound to slot `slot` of the semaphore `lock` (issue 33)
   */
  'semaphore': (boolean);
  'slot': (number);
}
