// MoveKeys: an admin moves one key, or every key under a prefix (tombstones included), to lock `toLock`,
// which nobody may hold or wait for (docs/auth.md "Moving keys", ../moveKeys.ts).
import { adminOnly } from '../auth/access';
import * as L from '../limits';
import { moveKeys as applyMove } from '../moveKeys';
import { checkKey, checkLockName, checkText } from './checks';
import type { CommandEntry, RequestMeta } from './entry';

/**
 * Exactly one of `key` / `prefix` (prefix '' = every key). Keys keep their watermarks; `toLock`'s latest
 * token is raised to the highest of them, so that every token it grants later is above. At most
 * MAX_MOVE_KEYS keys per entry.
 */
export interface MoveKeysCommand extends RequestMeta {
  type: 'MoveKeys';
  key?: string;
  prefix?: string;
  toLock: string;
}

export const moveKeys: CommandEntry<MoveKeysCommand, 'keys_moved'> = {
  type: 'MoveKeys',
  kind: 'request',
  statuses: ['keys_moved'],
  member: 'moveKeys',
  // A oneof member is written even when empty: prefix '' (every key) survives.
  encode: (c) => (c.key !== undefined ? { key: c.key, toLock: c.toLock } : { prefix: c.prefix ?? '', toLock: c.toLock }),
  decode(b, meta) {
    // Neither key nor prefix set: a move of nothing, which validation refuses.
    const set = b.oneof('what');
    const what = set === 'key' ? { key: b.str('key') } : set === 'prefix' ? { prefix: b.str('prefix') } : {};
    return { type: 'MoveKeys', ...meta, ...what, toLock: b.str('toLock') };
  },
  validate(c) {
    if ((c.key === undefined) === (c.prefix === undefined)) return 'a key move names exactly one of key and prefix';
    const what = c.key !== undefined ? checkKey(c.key) : checkText(c.prefix, 'prefix', 0, L.MAX_KEY_BYTES);
    return what ?? checkLockName(c.toLock);
  },
  permit: (p) => adminOnly(p),
  execute: (m, _index, c) => applyMove(m.kv, m.locks, c),
};
