// Original file: proto/fencelock/v1/lock.proto

import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from '../../fencelock/v1/RequestHeader';

export interface TokenIssueRequest {
  'header'?: (_fencelock_v1_RequestHeader | null);
  'user'?: (string);
}

export interface TokenIssueRequest__Output {
  'header': (_fencelock_v1_RequestHeader__Output | null);
  'user': (string);
}
