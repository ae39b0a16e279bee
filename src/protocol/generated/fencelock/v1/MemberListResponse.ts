// Original file: proto/fencelock/v1/lock.proto

import type { Member as _fencelock_v1_Member, Member__Output as _fencelock_v1_Member__Output } from '../../fencelock/v1/Member';
import type { Long } from '@grpc/proto-loader';

export interface MemberListResponse {
  'members'?: (_fencelock_v1_Member)[];
  /**
   * Give it as "clusterId" in the configuration of a node that joins.
   */
  'clusterId'?: (string);
  'commit'?: (number | string | Long);
  /**
   * Names of removed members: never given to another.
   */
  'removed'?: (string)[];
}

export interface MemberListResponse__Output {
  'members': (_fencelock_v1_Member__Output)[];
  /**
   * Give it as "clusterId" in the configuration of a node that joins.
   */
  'clusterId': (string);
  'commit': (string);
  /**
   * Names of removed members: never given to another.
   */
  'removed': (string)[];
}
