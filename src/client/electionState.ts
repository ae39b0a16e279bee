// What an election looks like right now, read from the store: the lock's holder (Describe) and the value
// under the election's key (Get). Shared by Election.leader() and the observer.
import type { GetResult, LockDescription } from './types';

/** A leadership as others see it: the grant's token, the value its leader wrote, the holder's public handle. */
export interface Leader {
  election: string;
  token: bigint;
  value: Uint8Array;
  /** The value as UTF-8 text. */
  text: string;
  /** Public handle of the leader's session (as describe() and watch() show holders; never its secret id). */
  holder: string;
}

/**
 * leader: the lock is held under `token` and the key was written under that token. pending: the lock is held,
 * but its holder has not written the value yet (its campaign has not returned: it does not lead yet). vacant:
 * nobody holds the lock.
 */
export type ElectionState = { kind: 'leader'; leader: Leader } | { kind: 'pending'; token: bigint } | { kind: 'vacant' };

export interface ElectionReader {
  get(key: string): Promise<GetResult>;
  describe(lock: string): Promise<LockDescription>;
}

/**
 * Reads the value first, then the lock: a value written under token T that is read while T still holds the
 * lock afterwards was the leader's throughout (no newer grant can come between, tokens only grow). The other
 * order could pair a holder with a value read after it resigned.
 */
export async function readElection(reader: ElectionReader, name: string): Promise<ElectionState> {
  const value = await reader.get(name);
  const lock = await reader.describe(name);
  if (!lock.held) return { kind: 'vacant' };
  if (!value.found || value.token !== lock.token) return { kind: 'pending', token: lock.token };
  return {
    kind: 'leader',
    leader: { election: name, token: lock.token, value: value.value, text: Buffer.from(value.value).toString('utf8'), holder: lock.holderSession },
  };
}
