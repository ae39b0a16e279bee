// Original file: proto/fencelock/v1/lock.proto

import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from '../../fencelock/v1/RequestHeader';

export interface RoleRequest {
  'header'?: (_fencelock_v1_RequestHeader | null);
  'role'?: (string);
}

export interface RoleRequest__Output {
  'header': (_fencelock_v1_RequestHeader__Output | null);
  'role': (string);
}
