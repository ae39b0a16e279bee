// Byte arrays entering or leaving the state machine are copied with copyBytes, never with .slice():
// Node's Buffer (what protobufjs and LevelDB hand out) overrides slice() to return a view that shares
// memory, which would let a caller's buffer change replicated state, or pin a whole log buffer.

/** A fresh plain Uint8Array with the same bytes. */
export function copyBytes(b: Uint8Array): Uint8Array {
  const out = new Uint8Array(b.length);
  out.set(b);
  return out;
}
