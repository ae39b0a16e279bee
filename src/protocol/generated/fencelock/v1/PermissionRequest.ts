// Original file: proto/fencelock/v1/lock.proto

import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from '../../fencelock/v1/RequestHeader';
import type { PermissionRule as _fencelock_v1_PermissionRule, PermissionRule__Output as _fencelock_v1_PermissionRule__Output } from '../../fencelock/v1/PermissionRule';

export interface PermissionRequest {
  'header'?: (_fencelock_v1_RequestHeader | null);
  'role'?: (string);
  'rule'?: (_fencelock_v1_PermissionRule | null);
}

export interface PermissionRequest__Output {
  'header': (_fencelock_v1_RequestHeader__Output | null);
  'role': (string);
  'rule': (_fencelock_v1_PermissionRule__Output | null);
}
