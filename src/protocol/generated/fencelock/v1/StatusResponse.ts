// Original file: proto/fencelock/v1/lock.proto

import type { PeerStatus as _fencelock_v1_PeerStatus, PeerStatus__Output as _fencelock_v1_PeerStatus__Output } from '../../fencelock/v1/PeerStatus';
import type { Long } from '@grpc/proto-loader';

export interface StatusResponse {
  'id'?: (string);
  'role'?: (string);
  'term'?: (number | string | Long);
  'leader'?: (string);
  'leaderAddress'?: (string);
  'commit'?: (number | string | Long);
  'applied'?: (number | string | Long);
  'snapshotIndex'?: (number | string | Long);
  'lastIndex'?: (number | string | Long);
  'peers'?: (_fencelock_v1_PeerStatus)[];
  'address'?: (string);
  /**
   * What this node's state machine holds, as of `applied`.
   */
  'sessions'?: (number | string | Long);
  'locksHeld'?: (number | string | Long);
  'waiters'?: (number | string | Long);
}

export interface StatusResponse__Output {
  'id': (string);
  'role': (string);
  'term': (string);
  'leader': (string);
  'leaderAddress': (string);
  'commit': (string);
  'applied': (string);
  'snapshotIndex': (string);
  'lastIndex': (string);
  'peers': (_fencelock_v1_PeerStatus__Output)[];
  'address': (string);
  /**
   * What this node's state machine holds, as of `applied`.
   */
  'sessions': (string);
  'locksHeld': (string);
  'waiters': (string);
}
