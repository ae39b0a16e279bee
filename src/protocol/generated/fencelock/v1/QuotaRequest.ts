// Original file: proto/fencelock/v1/lock.proto

import type { RequestHeader as _fencelock_v1_RequestHeader, RequestHeader__Output as _fencelock_v1_RequestHeader__Output } from '../../fencelock/v1/RequestHeader';
import type { Long } from '@grpc/proto-loader';

export interface QuotaRequest {
  'header'?: (_fencelock_v1_RequestHeader | null);
  'role'?: (string);
  'name'?: (string);
  'value'?: (number | string | Long);
  /**
   * true: the role no longer overrides this quota
   */
  'unset'?: (boolean);
}

export interface QuotaRequest__Output {
  'header': (_fencelock_v1_RequestHeader__Output | null);
  'role': (string);
  'name': (string);
  'value': (string);
  /**
   * true: the role no longer overrides this quota
   */
  'unset': (boolean);
}
