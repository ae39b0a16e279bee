// Original file: proto/fencelock/v1/lock.proto

import type { PermissionRule as _fencelock_v1_PermissionRule, PermissionRule__Output as _fencelock_v1_PermissionRule__Output } from '../../fencelock/v1/PermissionRule';
import type { Quota as _fencelock_v1_Quota, Quota__Output as _fencelock_v1_Quota__Output } from '../../fencelock/v1/Quota';

export interface RoleInfo {
  'name'?: (string);
  'rules'?: (_fencelock_v1_PermissionRule)[];
  'quotas'?: (_fencelock_v1_Quota)[];
}

export interface RoleInfo__Output {
  'name': (string);
  'rules': (_fencelock_v1_PermissionRule__Output)[];
  'quotas': (_fencelock_v1_Quota__Output)[];
}
