// The held-out half of the corpus (test/corpus/README.md, "The split"): documents that are only
// measured, never tuned on. Their misses do not fail one by one; what fails is a figure that falls
// below the floor recorded here, or a natural key on a field the document does not support that
// the floor did not already have.
import type { Expectation, Score } from './corpus.js';

/** What a held-out document must keep scoring (at least). */
export interface Floor {
  /** Expected types found. */
  readonly found: number;
  /** Found with the identity the expectation gives. */
  readonly identity: number;
  /** Wrong natural keys already there (`type: field`); any other one fails. */
  readonly wrongKeys: readonly string[];
}

/**
 * The floors: each held-out document's first score, measured at commit 6b6b1a5 before any rule was
 * written for it (README, "First scores"). When inference improves a document, raise its floor in
 * the same commit (the first-score table in the README stays as it was: it is the history); never
 * lower one to let a change pass.
 */
export const FLOORS: Readonly<Record<string, Floor>> = {
  victorops: { found: 6, identity: 3, wrongKeys: [] },
  '1password-connect': { found: 1, identity: 1, wrongKeys: [] },
  configcat: { found: 0, identity: 0, wrongKeys: [] },
  rudder: { found: 1, identity: 1, wrongKeys: [] },
  launchdarkly: { found: 9, identity: 9, wrongKeys: [] }, // 6, 6 at first; 7, 7 after decision 0050; 9, 9 after 0053 (each measured after its rules were committed)
  svix: { found: 4, identity: 4, wrongKeys: [] }, // 3 at first: an expectation corrected (README)
  gitlab: { found: 11, identity: 11, wrongKeys: [] },
  circleci: { found: 1, identity: 1, wrongKeys: [] },
  'ably-control': { found: 4, identity: 3, wrongKeys: [] },
  combell: { found: 6, identity: 3, wrongKeys: [] },
  'godaddy-domains': { found: 0, identity: 0, wrongKeys: [] },
  pinecone: { found: 2, identity: 2, wrongKeys: [] },
};

/** The figures of a set of documents, added up. */
export interface Totals {
  readonly documents: number;
  readonly expected: number;
  readonly found: number;
  readonly identity: number;
  readonly wrongKeys: number;
}

export function totals(scores: readonly Score[]): Totals {
  return {
    documents: scores.length,
    expected: scores.reduce((n, s) => n + s.expected, 0),
    found: scores.reduce((n, s) => n + s.found, 0),
    identity: scores.reduce((n, s) => n + s.identity, 0),
    wrongKeys: scores.reduce((n, s) => n + s.wrongKeys.length, 0),
  };
}

/** `42 of 73 (57.5 %)`. */
export function ratio(part: number, whole: number): string {
  const pct = whole === 0 ? '–' : `${((100 * part) / whole).toFixed(1)} %`;
  return `${part} of ${whole} (${pct})`;
}

/**
 * Where a held-out document's score falls short of its floor: one sentence per figure that dropped
 * and per wrong key the floor did not have. Empty when it holds.
 */
export function belowFloor(e: Expectation, s: Score, floor: Floor | undefined): string[] {
  if (floor === undefined) {
    return [
      `${e.slug} is held out but has no floor in test/corpus/held-out.ts: record its first score (README, "First scores") and add it to FLOORS`,
    ];
  }
  const problems: string[] = [];
  if (s.found < floor.found) {
    problems.push(`${e.slug}: ${s.found} expected types found, below its floor of ${floor.found}`);
  }
  if (s.identity < floor.identity) {
    problems.push(
      `${e.slug}: ${s.identity} with the expected identity, below its floor of ${floor.identity}`,
    );
  }
  for (const k of s.wrongKeys) {
    if (!floor.wrongKeys.includes(k)) {
      problems.push(
        `${e.slug}: a natural key on a field the document does not support (${k}); a guess is worse than no identity`,
      );
    }
  }
  return problems;
}
