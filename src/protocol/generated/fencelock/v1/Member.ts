// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

export interface Member {
  'id'?: (string);
  'clientAddress'?: (string);
  'peerAddress'?: (string);
  'learner'?: (boolean);
  /**
   * The leader's view of how far the member holds its log.
   */
  'match'?: (number | string | Long);
}

export interface Member__Output {
  'id': (string);
  'clientAddress': (string);
  'peerAddress': (string);
  'learner': (boolean);
  /**
   * The leader's view of how far the member holds its log.
   */
  'match': (string);
}
