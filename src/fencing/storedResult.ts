// Results of applied operations are stored for same-token retries as JSON. Bigints (tokens, BIGINT columns)
// are kept exact and come back as bigints: a replayed result equals the first one, type and all.
const BIGINT_TAG = '$bigint';

/** JSON text of a result; `undefined` is stored as null. */
export function encodeResult(value: unknown): string {
  return JSON.stringify(value === undefined ? null : value, (_k, v: unknown) => (typeof v === 'bigint' ? { [BIGINT_TAG]: v.toString() } : v));
}

export function decodeResult<R>(text: string): R {
  return JSON.parse(text, (_k, v: unknown) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const keys = Object.keys(v);
      const tagged = (v as Record<string, unknown>)[BIGINT_TAG];
      if (keys.length === 1 && typeof tagged === 'string') return BigInt(tagged);
    }
    return v;
  }) as R;
}

/** The result as a retry will see it (what storing and reading it back gives). */
export function asStored<R>(value: R): R {
  return decodeResult<R>(encodeResult(value));
}
