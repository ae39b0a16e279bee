import type { PersistBatch, RaftStorage } from '../../storage/types';
import type { RaftMetrics } from './raftMetrics';

/**
 * The node's Raft storage, timed: every persist is one fsynced batch, so its duration is the fsync latency
 * the Ready loop waits for. A batch that carries a snapshot is one installed from the leader.
 */
export function measuredStorage(inner: RaftStorage, metrics: RaftMetrics, nowMs: () => number): RaftStorage {
  return {
    load: () => inner.load(),
    close: () => inner.close(),
    saveSnapshot: (snapshot) => inner.saveSnapshot(snapshot),
    async persist(batch: PersistBatch): Promise<void> {
      const started = nowMs();
      await inner.persist(batch);
      metrics.persisted((nowMs() - started) / 1000, batch.entries.length);
      if (batch.snapshot) metrics.snapshotStored('leader', batch.snapshot.data.length);
    },
  };
}
