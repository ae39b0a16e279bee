// Original file: proto/fencelock/v1/lock.proto

import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from '../../fencelock/v1/RequestHeader';

export interface RevokeSessionRequest {
  'header'?: (_fencelock_v1_RequestHeader | null);
  /**
   * the session's public handle (Session.List)
   */
  'handle'?: (string);
}

export interface RevokeSessionRequest__Output {
  'header': (_fencelock_v1_RequestHeader__Output | null);
  /**
   * the session's public handle (Session.List)
   */
  'handle': (string);
}
