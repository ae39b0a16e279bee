// Original file: proto/fencelock/v1/lock.proto

import type { LockSummary as _fencelock_v1_LockSummary, LockSummary__Output as _fencelock_v1_LockSummary__Output } from '../../fencelock/v1/LockSummary';

export interface ListLocksResponse {
  /**
   * sorted by name (code point order)
   */
  'locks'?: (_fencelock_v1_LockSummary)[];
  /**
   * more follow: ask again with start_after = the last name
   */
  'more'?: (boolean);
}

export interface ListLocksResponse__Output {
  /**
   * sorted by name (code point order)
   */
  'locks': (_fencelock_v1_LockSummary__Output)[];
  /**
   * more follow: ask again with start_after = the last name
   */
  'more': (boolean);
}
