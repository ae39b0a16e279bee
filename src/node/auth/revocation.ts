// Revocation reaches what is open (docs/auth.md "Revocation"): a stream or a call in flight identified its
// caller once, so the node watches the auth changes it applies and tells each the moment its caller's token
// is revoked or its user deleted, rather than letting it serve on under rights that are gone.
import type { Command } from '../../state';
import type { ApiError } from '../api/errors';
import type { Access } from './access';
import type { Caller } from './caller';

/** What revocation listens to: the node's applied entries and snapshot installs (LockApp). */
export interface AppliedEntries {
  on(event: 'applied', listener: (index: number, command: Command) => void): unknown;
  on(event: 'restored', listener: () => void): unknown;
}

interface Watcher {
  readonly caller: Caller;
  /** It was a user when the watch began: its deletion ends what it opened. */
  readonly wasUser: boolean;
  readonly onLost: (err: ApiError) => void;
}

const NOTHING = (): void => undefined;

/**
 * One per node: the streams and calls that wait on their caller's rights. One listener on the applied
 * entries for all of them, and work only on an auth change (or a snapshot install, which may carry one).
 */
export class RightsWatch {
  private readonly watchers = new Set<Watcher>();

  constructor(
    entries: AppliedEntries,
    private readonly access: Access,
  ) {
    entries.on('applied', (_index, command) => {
      if (command.type === 'AuthChange') this.check();
    });
    entries.on('restored', () => this.check());
  }

  /**
   * Calls `onLost` once, at the apply after which `caller` no longer stands (Access.lost); returns the
   * function that stops watching. Nothing to watch without an identity (auth off, or none presented).
   */
  watch(caller: Caller | undefined, onLost: (err: ApiError) => void): () => void {
    if (caller === undefined || caller.via === 'address' || caller.via === 'none') return NOTHING;
    const w: Watcher = { caller, wasUser: this.access.isUser(caller), onLost };
    this.watchers.add(w);
    return () => this.watchers.delete(w);
  }

  /** How many streams and calls are watched (for tests). */
  get size(): number {
    return this.watchers.size;
  }

  private check(): void {
    for (const w of Array.from(this.watchers)) {
      const err = this.access.lost(w.caller, w.wasUser);
      if (err === undefined) continue;
      this.watchers.delete(w);
      w.onLost(err);
    }
  }
}
