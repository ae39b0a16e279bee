// The nearest valid name to a misspelt one, so that a refused config key says what was probably meant
// ("electonTicks": did you mean "electionTicks"?) rather than listing every key.

/**
 * Edit distance with adjacent transpositions (optimal string alignment): insertions, deletions,
 * substitutions and swaps of two neighbours each cost 1.
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The name closest to `word`, or undefined when none is close enough to be a plausible typo. Case is
 * ignored first ("loglevel" is "logLevel", "minSessionTTLMs" is "minSessionTtlMs"), then breaks ties.
 * Close enough: at most a third of the word's letters wrong, and at least one allowed.
 */
export function nearestName(word: string, names: Iterable<string>): string | undefined {
  const limit = Math.max(1, Math.floor(word.length / 3));
  let best: { name: string; folded: number; exact: number } | undefined;
  for (const name of names) {
    const folded = editDistance(word.toLowerCase(), name.toLowerCase());
    if (folded > limit) continue;
    const exact = editDistance(word, name);
    if (!best || folded < best.folded || (folded === best.folded && exact < best.exact)) best = { name, folded, exact };
  }
  return best?.name;
}

/**
 * Why a config key is refused: the nearest valid key when there is one (with its full path: `prefix` is
 * where the key sits, e.g. "members.n1."), otherwise every valid key at that place.
 */
export function unknownKeyReason(key: string, known: readonly string[], prefix = ''): string {
  const near = nearestName(key, known);
  return near === undefined ? `is not a known field (known: ${known.join(', ')})` : `is not a known field; did you mean "${prefix}${near}"?`;
}
