// Original file: proto/fencelock/v1/lock.proto

import type { SessionInfo as _fencelock_v1_SessionInfo, SessionInfo__Output as _fencelock_v1_SessionInfo__Output } from '../../fencelock/v1/SessionInfo';
import type { Long } from '@grpc/proto-loader';

// Original file: proto/fencelock/v1/lock.proto

export const _fencelock_v1_LockEvent_Kind = {
  KIND_UNSPECIFIED: 'KIND_UNSPECIFIED',
  GRANTED: 'GRANTED',
  RELEASED: 'RELEASED',
  EXPIRED: 'EXPIRED',
  /**
   * an admin ended the grant (Lock.Revoke); the holder's session goes on
   */
  REVOKED: 'REVOKED',
} as const;

export type _fencelock_v1_LockEvent_Kind =
  | 'KIND_UNSPECIFIED'
  | 0
  | 'GRANTED'
  | 1
  | 'RELEASED'
  | 2
  | 'EXPIRED'
  | 3
  /**
   * an admin ended the grant (Lock.Revoke); the holder's session goes on
   */
  | 'REVOKED'
  | 4

export type _fencelock_v1_LockEvent_Kind__Output = typeof _fencelock_v1_LockEvent_Kind[keyof typeof _fencelock_v1_LockEvent_Kind]

export interface LockEvent {
  'kind'?: (_fencelock_v1_LockEvent_Kind);
  'lock'?: (string);
  /**
   * public handle
   */
  'sessionId'?: (string);
  'token'?: (number | string | Long);
  /**
   * log index of the entry that caused it
   */
  'index'?: (number | string | Long);
  /**
   * GRANTED: the new holder's handle, client name and labels
   */
  'holder'?: (_fencelock_v1_SessionInfo | null);
  /**
   * REVOKED only: the identity that revoked the grant and the reason it gave.
   */
  'revokedBy'?: (string);
  'reason'?: (string);
  /**
   * A permit of a semaphore watched by WatchRequest.semaphore (issue 33): its name and slot (0..permits-1);
   * `token` is the permit's. GRANTED, RELEASED or EXPIRED, as for locks.
   */
  'semaphore'?: (string);
  'slot'?: (number);
  /**
   * A shared (read) grant started or ended (read-write locks, issue 33); false: exclusive.
   */
  'shared'?: (boolean);
}

export interface LockEvent__Output {
  'kind': (_fencelock_v1_LockEvent_Kind__Output);
  'lock': (string);
  /**
   * public handle
   */
  'sessionId': (string);
  'token': (string);
  /**
   * log index of the entry that caused it
   */
  'index': (string);
  /**
   * GRANTED: the new holder's handle, client name and labels
   */
  'holder': (_fencelock_v1_SessionInfo__Output | null);
  /**
   * REVOKED only: the identity that revoked the grant and the reason it gave.
   */
  'revokedBy': (string);
  'reason': (string);
  /**
   * A permit of a semaphore watched by WatchRequest.semaphore (issue 33): its name and slot (0..permits-1);
   * `token` is the permit's. GRANTED, RELEASED or EXPIRED, as for locks.
   */
  'semaphore': (string);
  'slot': (number);
  /**
   * A shared (read) grant started or ended (read-write locks, issue 33); false: exclusive.
   */
  'shared': (boolean);
}
