// Original file: proto/fencelock/v1/lock.proto

import type { AcquireResponse as _fencelock_v1_AcquireResponse, AcquireResponse__Output as _fencelock_v1_AcquireResponse__Output } from '../../fencelock/v1/AcquireResponse';
import type { ReleaseResponse as _fencelock_v1_ReleaseResponse, ReleaseResponse__Output as _fencelock_v1_ReleaseResponse__Output } from '../../fencelock/v1/ReleaseResponse';
import type { WriteResponse as _fencelock_v1_WriteResponse, WriteResponse__Output as _fencelock_v1_WriteResponse__Output } from '../../fencelock/v1/WriteResponse';
import type { GetResponse as _fencelock_v1_GetResponse, GetResponse__Output as _fencelock_v1_GetResponse__Output } from '../../fencelock/v1/GetResponse';
import type { SemaphoreAcquireResponse as _fencelock_v1_SemaphoreAcquireResponse, SemaphoreAcquireResponse__Output as _fencelock_v1_SemaphoreAcquireResponse__Output } from '../../fencelock/v1/SemaphoreAcquireResponse';
import type { SemaphoreReleaseResponse as _fencelock_v1_SemaphoreReleaseResponse, SemaphoreReleaseResponse__Output as _fencelock_v1_SemaphoreReleaseResponse__Output } from '../../fencelock/v1/SemaphoreReleaseResponse';
import type { AcquireAllResponse as _fencelock_v1_AcquireAllResponse, AcquireAllResponse__Output as _fencelock_v1_AcquireAllResponse__Output } from '../../fencelock/v1/AcquireAllResponse';
import type { CallResponse as _fencelock_v1_CallResponse, CallResponse__Output as _fencelock_v1_CallResponse__Output } from '../../fencelock/v1/CallResponse';
import type { Long } from '@grpc/proto-loader';

export interface CallResponse {
  'callId'?: (number | string | Long);
  /**
   * a gRPC status code; 0 (OK) with the result set
   */
  'code'?: (number);
  /**
   * the status message when code != 0
   */
  'message'?: (string);
  /**
   * fencelock-leader, -reason, -watermark, -key, -key-lock
   */
  'metadata'?: ({[key: string]: string});
  'acquire'?: (_fencelock_v1_AcquireResponse | null);
  'release'?: (_fencelock_v1_ReleaseResponse | null);
  'write'?: (_fencelock_v1_WriteResponse | null);
  'get'?: (_fencelock_v1_GetResponse | null);
  'semaphoreAcquire'?: (_fencelock_v1_SemaphoreAcquireResponse | null);
  'semaphoreRelease'?: (_fencelock_v1_SemaphoreReleaseResponse | null);
  'acquireAll'?: (_fencelock_v1_AcquireAllResponse | null);
  /**
   * Answers sent together (each a single call's, never a batch); a message with answers sets nothing else.
   */
  'answers'?: (_fencelock_v1_CallResponse)[];
  'result'?: "acquire"|"release"|"write"|"get"|"semaphoreAcquire"|"semaphoreRelease"|"acquireAll";
}

export interface CallResponse__Output {
  'callId': (string);
  /**
   * a gRPC status code; 0 (OK) with the result set
   */
  'code': (number);
  /**
   * the status message when code != 0
   */
  'message': (string);
  /**
   * fencelock-leader, -reason, -watermark, -key, -key-lock
   */
  'metadata': ({[key: string]: string});
  'acquire'?: (_fencelock_v1_AcquireResponse__Output | null);
  'release'?: (_fencelock_v1_ReleaseResponse__Output | null);
  'write'?: (_fencelock_v1_WriteResponse__Output | null);
  'get'?: (_fencelock_v1_GetResponse__Output | null);
  'semaphoreAcquire'?: (_fencelock_v1_SemaphoreAcquireResponse__Output | null);
  'semaphoreRelease'?: (_fencelock_v1_SemaphoreReleaseResponse__Output | null);
  'acquireAll'?: (_fencelock_v1_AcquireAllResponse__Output | null);
  /**
   * Answers sent together (each a single call's, never a batch); a message with answers sets nothing else.
   */
  'answers': (_fencelock_v1_CallResponse__Output)[];
  'result'?: "acquire"|"release"|"write"|"get"|"semaphoreAcquire"|"semaphoreRelease"|"acquireAll";
}
