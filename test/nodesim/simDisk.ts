import type { PersistedState, Snapshot } from '../../src/raft/types';
import { MemoryStorage } from '../../src/storage/memoryStorage';
import type { PersistBatch, RaftStorage } from '../../src/storage/types';
import type { Actor } from './world';

/**
 * A node's disk: src/storage's MemoryStorage, whose writes become durable only when their fsync completes
 * after a random delay on the node's own time line. A crash before then loses them (or keeps a prefix of
 * the un-synced batches, as a real disk may).
 */
export class SimDisk {
  readonly storage = new MemoryStorage();

  /** The RaftStorage a new incarnation of the node gets; `written` sees each batch as it is written. */
  forIncarnation(actor: Actor, fsyncMs: () => number, written?: (batch: PersistBatch) => void): RaftStorage {
    const storage = this.storage;
    const incarnation = actor.incarnation;
    const later = (done: () => void): Promise<void> =>
      new Promise<void>((resolve) => {
        actor.world.at(actor.realAfter(fsyncMs()), actor, () => {
          done();
          resolve();
        }, incarnation);
      });
    // A dead incarnation writes nothing more (its process is gone).
    const alive = (): boolean => actor.incarnation === incarnation;
    return {
      load: (): Promise<PersistedState> => storage.load(),
      persist: (batch: PersistBatch): Promise<void> => {
        if (!alive()) return new Promise<void>(() => undefined);
        storage.write(batch);
        written?.(batch);
        return later(() => storage.sync());
      },
      saveSnapshot: (snapshot: Snapshot): Promise<void> => {
        if (!alive()) return new Promise<void>(() => undefined);
        storage.saveSnapshotSync(snapshot);
        return later(() => undefined);
      },
      close: () => Promise.resolve(),
    };
  }

  /** Power loss: the first `keep` un-synced batches survive, the rest are gone. */
  crash(keep: number): number {
    const lost = Math.max(0, this.storage.unsyncedBatches - keep);
    this.storage.crash(keep);
    return lost;
  }
}
