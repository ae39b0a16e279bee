// The nearest valid name to a misspelt one, so that a refused config key says what was probably meant
// ("electonTicks": did you mean "electionTicks"?) rather than listing every key.

/**
 * Edit distance with adjacent transpositions (optimal string alignment): insertions, deletions,
 * substitutions and swaps of two neighbours each cost 1.
 */
export function editDistance(a: string, b: string): number {
  // Three rows of the table: before the previous (for swaps), the previous, the current.
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(cell(previous, j) + 1, cell(current, j - 1) + 1, cell(previous, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, cell(before, j - 2) + 1);
      current.push(best);
    }
    before = previous;
    previous = current;
  }
  return cell(previous, b.length);
}

/** A cell of a row filled up to j: always there, by construction. */
function cell(row: number[], j: number): number {
  const v = row[j];
  if (v === undefined) throw new Error(`editDistance: cell ${j} of a row of ${row.length}`);
  return v;
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
