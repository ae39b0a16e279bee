// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface SemaphoreReleaseResponse {
  /**
   * the slot released
   */
  'slot'?: (number);
  /**
   * public handle of the waiter the slot was handed to, if any
   */
  'nextHolderSession'?: (string);
  /**
   * its token; 0 when the slot became free
   */
  'nextToken'?: (number | string | Long);
}

export interface SemaphoreReleaseResponse__Output {
  /**
   * the slot released
   */
  'slot': (number);
  /**
   * public handle of the waiter the slot was handed to, if any
   */
  'nextHolderSession': (string);
  /**
   * its token; 0 when the slot became free
   */
  'nextToken': (string);
}
