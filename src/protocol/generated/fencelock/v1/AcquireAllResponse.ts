// Original file: proto/fencelock/v1/lock.proto

import type { LockGrant as _fencelock_v1_LockGrant, LockGrant__Output as _fencelock_v1_LockGrant__Output } from '../../fencelock/v1/LockGrant';
import type { Long } from '@grpc/proto-loader';

export interface AcquireAllResponse {
  /**
   * false only for a try-acquire that found a lock of the set busy
   */
  'acquired'?: (boolean);
  /**
   * every lock's token: the index of the one entry that granted them all
   */
  'token'?: (number | string | Long);
  /**
   * one per lock, in the request's order
   */
  'grants'?: (_fencelock_v1_LockGrant)[];
  /**
   * when not acquired: a lock of the set that is held, delayed or awaited
   */
  'busyLock'?: (string);
}

export interface AcquireAllResponse__Output {
  /**
   * false only for a try-acquire that found a lock of the set busy
   */
  'acquired': (boolean);
  /**
   * every lock's token: the index of the one entry that granted them all
   */
  'token': (string);
  /**
   * one per lock, in the request's order
   */
  'grants': (_fencelock_v1_LockGrant__Output)[];
  /**
   * when not acquired: a lock of the set that is held, delayed or awaited
   */
  'busyLock': (string);
}
