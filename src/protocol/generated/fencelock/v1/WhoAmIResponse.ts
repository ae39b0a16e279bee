// Original file: proto/fencelock/v1/lock.proto

import type { PermissionRule as _fencelock_v1_PermissionRule, PermissionRule__Output as _fencelock_v1_PermissionRule__Output } from '../../fencelock/v1/PermissionRule';

export interface WhoAmIResponse {
  /**
   * '' when the call carries none
   */
  'identity'?: (string);
  /**
   * "certificate", "token" or "" (none)
   */
  'via'?: (string);
  'authEnabled'?: (boolean);
  'roles'?: (string)[];
  'rules'?: (_fencelock_v1_PermissionRule)[];
}

export interface WhoAmIResponse__Output {
  /**
   * '' when the call carries none
   */
  'identity': (string);
  /**
   * "certificate", "token" or "" (none)
   */
  'via': (string);
  'authEnabled': (boolean);
  'roles': (string)[];
  'rules': (_fencelock_v1_PermissionRule__Output)[];
}
