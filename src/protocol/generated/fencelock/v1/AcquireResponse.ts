// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface AcquireResponse {
  /**
   * false only for a try-acquire of a held lock
   */
  'acquired'?: (boolean);
  /**
   * the fencing token: index of the log entry that granted the lock
   */
  'token'?: (number | string | Long);
  /**
   * when not acquired: public handle of the holder's session
   */
  'holderSession'?: (string);
}

export interface AcquireResponse__Output {
  /**
   * false only for a try-acquire of a held lock
   */
  'acquired': (boolean);
  /**
   * the fencing token: index of the log entry that granted the lock
   */
  'token': (string);
  /**
   * when not acquired: public handle of the holder's session
   */
  'holderSession': (string);
}
