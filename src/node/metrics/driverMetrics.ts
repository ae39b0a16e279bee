/**
 * What the Raft driver reports that cannot be seen from outside it (its storage, transport and status are
 * measured by wrappers and scrape-time reads instead, so the driver calls only this).
 */
export interface DriverMetrics {
  /** A local snapshot was encoded and the log compacted: from capture to compaction, and its size. */
  snapshotTaken(seconds: number, bytes: number): void;
}
