// Revocation reaches open streams (docs/auth.md "Revocation"): a stream identifies its caller once, so it
// watches the auth changes this node applies and ends the moment its caller's token is revoked or its user
// deleted, rather than serving on under rights that are gone.
import type { Command } from '../../state';
import type { ApiError } from '../api/errors';
import type { Access } from './access';
import type { Caller } from './caller';

/** What revocation listens to: the node's applied entries and snapshot installs (LockApp). */
export interface AppliedEntries {
  on(event: 'applied', listener: (index: number, command: Command) => void): unknown;
  on(event: 'restored', listener: () => void): unknown;
  off(event: 'applied', listener: (index: number, command: Command) => void): unknown;
  off(event: 'restored', listener: () => void): unknown;
}

/**
 * Calls `onLost` once, at the apply of the auth change (or the snapshot install) after which `caller` no
 * longer stands (Access.lost); returns the function that stops watching. Nothing to watch without a caller.
 */
export function whenRightsLost(entries: AppliedEntries, access: Access, caller: Caller | undefined, onLost: (err: ApiError) => void): () => void {
  if (caller === undefined) return () => undefined;
  const wasUser = access.isUser(caller);
  const check = (): void => {
    const err = access.lost(caller, wasUser);
    if (err === undefined) return;
    stop();
    onLost(err);
  };
  const onApplied = (_index: number, command: Command): void => {
    if (command.type === 'AuthChange') check();
  };
  const stop = (): void => {
    entries.off('applied', onApplied);
    entries.off('restored', check);
  };
  entries.on('applied', onApplied);
  entries.on('restored', check);
  return stop;
}
