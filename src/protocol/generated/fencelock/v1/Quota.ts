// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface Quota {
  /**
   * see docs/auth.md for the quota names
   */
  'name'?: (string);
  'value'?: (number | string | Long);
}

export interface Quota__Output {
  /**
   * see docs/auth.md for the quota names
   */
  'name': (string);
  'value': (string);
}
