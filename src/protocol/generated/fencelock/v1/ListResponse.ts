// Original file: proto/fencelock/v1/lock.proto

import type { KeyValue as _fencelock_v1_KeyValue, KeyValue__Output as _fencelock_v1_KeyValue__Output } from '../../fencelock/v1/KeyValue';

export interface ListResponse {
  'items'?: (_fencelock_v1_KeyValue)[];
  'more'?: (boolean);
}

export interface ListResponse__Output {
  'items': (_fencelock_v1_KeyValue__Output)[];
  'more': (boolean);
}
