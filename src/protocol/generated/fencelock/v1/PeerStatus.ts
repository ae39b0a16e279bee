// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface PeerStatus {
  'id'?: (string);
  'address'?: (string);
  'match'?: (number | string | Long);
  'next'?: (number | string | Long);
  'state'?: (string);
  /**
   * A non-voting member (catching up, or not yet promoted).
   */
  'learner'?: (boolean);
}

export interface PeerStatus__Output {
  'id': (string);
  'address': (string);
  'match': (string);
  'next': (string);
  'state': (string);
  /**
   * A non-voting member (catching up, or not yet promoted).
   */
  'learner': (boolean);
}
