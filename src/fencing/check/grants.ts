// The real tokens the checks play with. The CLI implements this with a cluster client; the checks themselves
// know nothing of the cluster.

export interface Grants {
  /** The lock the dedicated resource gets bound to. */
  readonly lock: string;
  /** Two grants of the lock in turn (the first released before the second is taken): the newer one stays held. */
  twoGrants(): Promise<{ older: bigint; newer: bigint }>;
  /** A grant of another lock: its token, which the resource must not compare with the lock's. */
  otherLock(): Promise<{ lock: string; token: bigint }>;
  /** The latest token the cluster has issued for the lock. */
  latestToken(): Promise<bigint>;
  /** Releases the held grant and takes the lock again: the next holder's token, held until close. */
  nextGrant(): Promise<bigint>;
}
