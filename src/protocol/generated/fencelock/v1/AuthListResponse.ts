// Original file: proto/fencelock/v1/lock.proto

import type { UserInfo as _fencelock_v1_UserInfo, UserInfo__Output as _fencelock_v1_UserInfo__Output } from '../../fencelock/v1/UserInfo';
import type { RoleInfo as _fencelock_v1_RoleInfo, RoleInfo__Output as _fencelock_v1_RoleInfo__Output } from '../../fencelock/v1/RoleInfo';
import type { TokenInfo as _fencelock_v1_TokenInfo, TokenInfo__Output as _fencelock_v1_TokenInfo__Output } from '../../fencelock/v1/TokenInfo';

export interface AuthListResponse {
  'authEnabled'?: (boolean);
  'users'?: (_fencelock_v1_UserInfo)[];
  'roles'?: (_fencelock_v1_RoleInfo)[];
  'tokens'?: (_fencelock_v1_TokenInfo)[];
}

export interface AuthListResponse__Output {
  'authEnabled': (boolean);
  'users': (_fencelock_v1_UserInfo__Output)[];
  'roles': (_fencelock_v1_RoleInfo__Output)[];
  'tokens': (_fencelock_v1_TokenInfo__Output)[];
}
