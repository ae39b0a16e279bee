// Original file: proto/fencelock/v1/lock.proto

import type { SnapshotHeader as _fencelock_v1_SnapshotHeader, SnapshotHeader__Output as _fencelock_v1_SnapshotHeader__Output } from '../../fencelock/v1/SnapshotHeader';

export interface SnapshotChunk {
  /**
   * in the first message only
   */
  'header'?: (_fencelock_v1_SnapshotHeader | null);
  /**
   * the next bytes of the state (empty in the first message)
   */
  'data'?: (Buffer | Uint8Array | string);
}

export interface SnapshotChunk__Output {
  /**
   * in the first message only
   */
  'header': (_fencelock_v1_SnapshotHeader__Output | null);
  /**
   * the next bytes of the state (empty in the first message)
   */
  'data': (Buffer);
}
