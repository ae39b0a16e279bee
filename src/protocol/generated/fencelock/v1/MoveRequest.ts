// Original file: proto/fencelock/v1/lock.proto

import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from '../../fencelock/v1/RequestHeader';

export interface MoveRequest {
  'header'?: (_fencelock_v1_RequestHeader | null);
  'key'?: (string);
  'prefix'?: (string);
  'toLock'?: (string);
  'what'?: "key"|"prefix";
}

export interface MoveRequest__Output {
  'header': (_fencelock_v1_RequestHeader__Output | null);
  'key'?: (string);
  'prefix'?: (string);
  'toLock': (string);
  'what'?: "key"|"prefix";
}
