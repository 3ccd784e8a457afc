/** Edit distance (insertions, deletions, substitutions) between two strings. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur.push(Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * The candidates close enough to a mistyped word to suggest (a fifth of its length, at least two
 * edits), nearest first, at most `max`; ties keep the candidates' order.
 */
export function nearMatches(word: string, candidates: readonly string[], max = 3): string[] {
  const limit = Math.max(2, Math.floor(word.length / 5));
  return candidates
    .map((c, i) => ({ c, i, d: editDistance(word, c) }))
    .filter((x) => x.d <= limit && x.c !== word)
    .sort((x, y) => x.d - y.d || x.i - y.i)
    .slice(0, max)
    .map((x) => x.c);
}
