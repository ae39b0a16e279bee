// Original file: proto/fencelock/v1/lock.proto

import type { PermitHolder as _fencelock_v1_PermitHolder, PermitHolder__Output as _fencelock_v1_PermitHolder__Output } from '../../fencelock/v1/PermitHolder';
import type { SessionInfo as _fencelock_v1_SessionInfo, SessionInfo__Output as _fencelock_v1_SessionInfo__Output } from '../../fencelock/v1/SessionInfo';
import type { Long } from '@grpc/proto-loader';

/**
 * An unknown semaphore (never used, or idle and forgotten) answers permits 0 and nothing else.
 */
export interface SemaphoreDescribeResponse {
  'permits'?: (number);
  /**
   * slot order
   */
  'holders'?: (_fencelock_v1_PermitHolder)[];
  /**
   * FIFO order
   */
  'waiters'?: (_fencelock_v1_SessionInfo)[];
  /**
   * Per slot taken since the semaphore was last idle, in slot order: its latest token (its watermark).
   */
  'slotTokens'?: (number | string | Long)[];
}

/**
 * An unknown semaphore (never used, or idle and forgotten) answers permits 0 and nothing else.
 */
export interface SemaphoreDescribeResponse__Output {
  'permits': (number);
  /**
   * slot order
   */
  'holders': (_fencelock_v1_PermitHolder__Output)[];
  /**
   * FIFO order
   */
  'waiters': (_fencelock_v1_SessionInfo__Output)[];
  /**
   * Per slot taken since the semaphore was last idle, in slot order: its latest token (its watermark).
   */
  'slotTokens': (string)[];
}
