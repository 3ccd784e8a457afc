/** Levenshtein distance between two words (small inputs only: names and field names). */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/** The candidate closest to `word` within `maxDistance` edits (first one on ties); undefined if none. */
export function closest(
  word: string,
  candidates: Iterable<string>,
  maxDistance = 2,
): string | undefined {
  let best: string | undefined;
  let bestDistance = maxDistance + 1;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d < bestDistance && c !== word) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/** ` Did you mean \`x\`?` when a close candidate exists, else the empty string: append to a message. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const c = closest(word, candidates);
  return c === undefined ? '' : ` Did you mean \`${c}\`?`;
}

/** A list of names for a message: `a, b, c`, or `(none)` when empty. */
export function listOf(names: Iterable<string>): string {
  const all = [...names];
  return all.length === 0 ? '(none)' : all.join(', ');
}
