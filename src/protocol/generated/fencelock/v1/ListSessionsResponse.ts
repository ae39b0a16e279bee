// Original file: proto/fencelock/v1/lock.proto

import type { SessionSummary as _fencelock_v1_SessionSummary, SessionSummary__Output as _fencelock_v1_SessionSummary__Output } from '../../fencelock/v1/SessionSummary';

export interface ListSessionsResponse {
  /**
   * sorted by handle
   */
  'sessions'?: (_fencelock_v1_SessionSummary)[];
  /**
   * more follow: ask again with start_after = the last handle
   */
  'more'?: (boolean);
}

export interface ListSessionsResponse__Output {
  /**
   * sorted by handle
   */
  'sessions': (_fencelock_v1_SessionSummary__Output)[];
  /**
   * more follow: ask again with start_after = the last handle
   */
  'more': (boolean);
}
