// Original file: proto/fencelock/v1/lock.proto

import type { Long } from '@grpc/proto-loader';

// Original file: proto/fencelock/v1/lock.proto

/**
 * Why a try-acquire was not granted (issue 33; BUSY_UNSPECIFIED when acquired, or from an older server).
 */
export const _fencelock_v1_AcquireResponse_Busy = {
  BUSY_UNSPECIFIED: 'BUSY_UNSPECIFIED',
  /**
   * held exclusively: holder_session names the holder
   */
  BUSY_HELD: 'BUSY_HELD',
  /**
   * held by shared (read) grants, and the try was exclusive
   */
  BUSY_SHARED: 'BUSY_SHARED',
  /**
   * not held against this mode, but others wait first (FIFO): first_waiter_session
   */
  BUSY_QUEUED: 'BUSY_QUEUED',
  /**
   * Free (or readable), but an AcquireAll set that waits for other locks of its set heads the queue and
   * keeps this lock free for itself (docs/architecture.md#atomic-multi-lock): first_waiter_session.
   */
  BUSY_SET_WAITING: 'BUSY_SET_WAITING',
} as const;

/**
 * Why a try-acquire was not granted (issue 33; BUSY_UNSPECIFIED when acquired, or from an older server).
 */
export type _fencelock_v1_AcquireResponse_Busy =
  | 'BUSY_UNSPECIFIED'
  | 0
  /**
   * held exclusively: holder_session names the holder
   */
  | 'BUSY_HELD'
  | 1
  /**
   * held by shared (read) grants, and the try was exclusive
   */
  | 'BUSY_SHARED'
  | 2
  /**
   * not held against this mode, but others wait first (FIFO): first_waiter_session
   */
  | 'BUSY_QUEUED'
  | 3
  /**
   * Free (or readable), but an AcquireAll set that waits for other locks of its set heads the queue and
   * keeps this lock free for itself (docs/architecture.md#atomic-multi-lock): first_waiter_session.
   */
  | 'BUSY_SET_WAITING'
  | 4

/**
 * Why a try-acquire was not granted (issue 33; BUSY_UNSPECIFIED when acquired, or from an older server).
 */
export type _fencelock_v1_AcquireResponse_Busy__Output = typeof _fencelock_v1_AcquireResponse_Busy[keyof typeof _fencelock_v1_AcquireResponse_Busy]

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
   * when not acquired: public handle of the holder's session ('' when none)
   */
  'holderSession'?: (string);
  'busy'?: (_fencelock_v1_AcquireResponse_Busy);
  /**
   * BUSY_QUEUED, BUSY_SET_WAITING: public handle of the head of the queue
   */
  'firstWaiterSession'?: (string);
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
   * when not acquired: public handle of the holder's session ('' when none)
   */
  'holderSession': (string);
  'busy': (_fencelock_v1_AcquireResponse_Busy__Output);
  /**
   * BUSY_QUEUED, BUSY_SET_WAITING: public handle of the head of the queue
   */
  'firstWaiterSession': (string);
}
