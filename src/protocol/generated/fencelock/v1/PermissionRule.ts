// Original file: proto/fencelock/v1/lock.proto

import type { Permission as _fencelock_v1_Permission, Permission__Output as _fencelock_v1_Permission__Output } from '../../fencelock/v1/Permission';

export interface PermissionRule {
  'permission'?: (_fencelock_v1_Permission);
  /**
   * '' = every name
   */
  'prefix'?: (string);
}

export interface PermissionRule__Output {
  'permission': (_fencelock_v1_Permission__Output);
  /**
   * '' = every name
   */
  'prefix': (string);
}
