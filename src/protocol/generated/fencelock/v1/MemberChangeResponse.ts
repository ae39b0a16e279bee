// Original file: proto/fencelock/v1/lock.proto

import type { MemberListResponse as _fencelock_v1_MemberListResponse, MemberListResponse__Output as _fencelock_v1_MemberListResponse__Output } from '../../fencelock/v1/MemberListResponse';
import type { Long } from '@grpc/proto-loader';

export interface MemberChangeResponse {
  /**
   * The ConfChange entry (0 when the change was already made).
   */
  'index'?: (number | string | Long);
  'members'?: (_fencelock_v1_MemberListResponse | null);
}

export interface MemberChangeResponse__Output {
  /**
   * The ConfChange entry (0 when the change was already made).
   */
  'index': (string);
  'members': (_fencelock_v1_MemberListResponse__Output | null);
}
