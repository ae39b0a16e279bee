// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface SemaphoreAcquireResponse {
  /**
   * false only for a try-acquire when every permit is taken
   */
  'acquired'?: (boolean);
  /**
   * the permit's fencing token: index of the log entry that granted it
   */
  'token'?: (number | string | Long);
  /**
   * 0..permits-1: the slot the permit took (fencing is per slot)
   */
  'slot'?: (number);
  /**
   * the number of permits in force
   */
  'permits'?: (number);
}

export interface SemaphoreAcquireResponse__Output {
  /**
   * false only for a try-acquire when every permit is taken
   */
  'acquired': (boolean);
  /**
   * the permit's fencing token: index of the log entry that granted it
   */
  'token': (string);
  /**
   * 0..permits-1: the slot the permit took (fencing is per slot)
   */
  'slot': (number);
  /**
   * the number of permits in force
   */
  'permits': (number);
}
