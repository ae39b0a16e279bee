// A StateSnapshot backed by its encoded bytes.
//
// Taking a snapshot (toSnapshot + encodeSnapshot, what the node does on compaction) and installing one
// (decodeSnapshot + fromSnapshot) must not build the plain object form: for the largest states that is
// hundreds of MiB of small objects and seconds of work with the event loop blocked. So toSnapshot encodes
// the machine straight into bytes and decodeSnapshot restores a machine straight from them, and both hand
// out a view: an object that is a StateSnapshot in every respect (plain data, same fields), whose lists are
// decoded from the bytes only when someone reads them.
//
// While nobody has read or written a field, the view is known to stand for exactly its bytes, and
// encodeSnapshot returns them without encoding anything. The first access to any field replaces the lazy
// fields with ordinary data properties holding the decoded plain data, and forgets the bytes: from then on
// the view is an ordinary plain snapshot (which may be mutated), encoded and restored as such.
import { SNAPSHOT_FORMAT, type StateSnapshot } from './snapshot';
import { decodePlainSnapshot } from './snapshotPlain';

/** Views not yet materialized -> their bytes. */
const viewBytes = new WeakMap<object, Uint8Array>();

const FIELDS = ['format', 'lastApplied', 'gcFloor', 'sessions', 'locks', 'keys', 'dedup'] as const;

/**
 * A view of `bytes` (which must be a valid encoding, and which the view owns from now on: nobody may mutate
 * them). `lastApplied` and `gcFloor` are the header's values.
 */
export function makeSnapshotView(bytes: Uint8Array, lastApplied: number, gcFloor: number): StateSnapshot {
  const view = {} as StateSnapshot;
  const header: Pick<StateSnapshot, 'format' | 'lastApplied' | 'gcFloor'> = { format: SNAPSHOT_FORMAT, lastApplied, gcFloor };
  const materialize = (): StateSnapshot => {
    if (viewBytes.has(view)) {
      const plain = decodePlainSnapshot(bytes);
      for (const f of FIELDS) {
        Object.defineProperty(view, f, { value: plain[f], writable: true, enumerable: true, configurable: true });
      }
      viewBytes.delete(view);
    }
    return view;
  };
  for (const f of FIELDS) {
    const isHeader = f === 'format' || f === 'lastApplied' || f === 'gcFloor';
    Object.defineProperty(view, f, {
      enumerable: true,
      configurable: true,
      get: () => (isHeader && viewBytes.has(view) ? header[f as keyof typeof header] : materialize()[f]),
      set: (v: unknown) => {
        (materialize() as unknown as Record<string, unknown>)[f] = v;
      },
    });
  }
  viewBytes.set(view, bytes);
  return view;
}

/** The bytes a view stands for, or undefined for anything else (a plain snapshot, a materialized view). */
export function bytesOfView(s: StateSnapshot): Uint8Array | undefined {
  return viewBytes.get(s);
}
