/**
 * Replaces `target[key]` with `make(original)` for one planted-bug run; returns the undo. Untyped, so that
 * private members of the runtime and the state machine can be patched too.
 */
export function patchMember(target: object, key: string, make: (original: unknown) => unknown): () => void {
  const t = target as Record<string, unknown>;
  const original = t[key];
  t[key] = make(original);
  return () => {
    t[key] = original;
  };
}
