// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface RevokeLockResponse {
  /**
   * the token of the grant that ended
   */
  'endedToken'?: (number | string | Long);
  /**
   * public handle of the waiter the lock was handed to, if any
   */
  'nextHolderSession'?: (string);
  /**
   * its token (the Revoke entry's index); 0 when the lock became free
   */
  'nextToken'?: (number | string | Long);
}

export interface RevokeLockResponse__Output {
  /**
   * the token of the grant that ended
   */
  'endedToken': (string);
  /**
   * public handle of the waiter the lock was handed to, if any
   */
  'nextHolderSession': (string);
  /**
   * its token (the Revoke entry's index); 0 when the lock became free
   */
  'nextToken': (string);
}
