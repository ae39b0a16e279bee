// The snapshot byte format: deterministic (the same state always gives the same bytes: fields in a fixed
// order, lists in snapshot order, minimal varints, one canonical choice wherever the grammar offers two) and
// exact (decode(encode(s)) equals s, and encode(decode(b)) equals b for every b that decodes).
//
//   file        = magic "FLSM" | varint format (2) | varint lastApplied | varint gcFloor
//                 | list(session) | list(lock) | list(key) | list(dedupClient)
//   list(x)     = varint count | x * count
//   session     = str id | str clientName | varint ttlMs | varint openedAt | varint openIndex
//   lock        = str name | sref holder | varint token | varint grantedAt | varint latestToken
//                 | sref latestHolder | list(sref waiter)
//   sref        = varint: 0 = '' | 1 then str = an id that is none of the sessions' | 2 + i = id of session i
//                 (a reference always names the first session with that id)
//   key         = str key | lref lock | varint watermark | byte deleted (0/1) | bytes value
//   lref        = varint: 0 then str = a name that is none of the locks' | 1 + i = name of lock i (the first)
//   dedupClient = str clientId | varint floor | list(varint requestId | dstr commandType | result)
//   result      = byte 1 | varint n | (dstr field | value) * n     the binary form, when it carries the
//                                                                 result exactly (snapshotFormat.ts)
//               | byte 0 | str json                              any other result, as its JSON
//   value       = byte 0 | dstr  (string)  | byte 1 | varint (integer)  | byte 2 (false)  | byte 3 (true)
//               | byte 4 | list(dstr)  (array of strings)
//   dstr        = varint: 0 then str = a string not in DICT | 1 + i = DICT[i] (snapshotFormat.ts)
//   str         = bytes of its UTF-8 encoding (strictly valid);  bytes = varint length | raw bytes
//   varint      = unsigned LEB128 of a safe integer (< 2^53), minimal length
//
// Format 1 wrote holders, waiters and key locks as strings and stored results as JSON; format 2 refers to
// sessions and locks by position (a 32-character id once instead of up to three times per lock) and
// writes stored results in binary. Format 1 is still read (a node upgraded with a format 1 snapshot in its
// data directory restores it, and writes format 2 from then on; snapshotPlain.ts); exactness holds for the
// current format. Any other format is refused ("unsupported format").
//
// Integrity (checksums) is the storage layer's job; decoding still rejects anything malformed.
//
// How it is fast: the machine encodes itself straight into the bytes (toSnapshot) and restores itself
// straight from them (decodeSnapshot); the plain StateSnapshot objects in between are views of the bytes,
// decoded only when read (snapshotView.ts).
import { LockStateMachine } from './lockStateMachine';
import type { StateSnapshot } from './snapshot';
import { encodePlainSnapshot } from './snapshotPlain';
import { bytesOfView } from './snapshotView';

/**
 * The bytes of a snapshot. For a snapshot from toSnapshot or decodeSnapshot that nobody has read or changed,
 * these are the bytes it was made from, returned as they are (shared: do not mutate them); any other
 * snapshot is encoded.
 */
export function encodeSnapshot(s: StateSnapshot): Uint8Array {
  return bytesOfView(s) ?? encodePlainSnapshot(s);
}

/**
 * Decodes a snapshot; throws SnapshotError on anything malformed in the encoding. The content (ids, order,
 * cross-references, invariants) is checked by LockStateMachine.fromSnapshot. The result never aliases
 * `bytes` (they are copied).
 */
export function decodeSnapshot(bytes: Uint8Array): StateSnapshot {
  return LockStateMachine.decodeToView(bytes);
}
