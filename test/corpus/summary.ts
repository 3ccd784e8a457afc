// The measured summary that corpus.test.ts writes into test/corpus/README.md when run with
// TEND_CORPUS_REPORT=1: per document how many expected types inspect finds and how many with the
// identity a person expects, and for every miss what inspect says.
import type { Expectation, Inspection } from './corpus.js';
import { meets } from './corpus.js';

export const SUMMARY_START = '<!-- corpus-summary:start (written by TEND_CORPUS_REPORT=1) -->';
export const SUMMARY_END = '<!-- corpus-summary:end -->';

export interface Measured {
  readonly expectation: Expectation;
  readonly plain: Inspection;
  readonly withOverlay?: Inspection;
  readonly declaredVersion: string;
}

/** One row per document, a total, then every expected type that is missing or wrong, with why. */
export function renderSummary(measured: readonly Measured[]): string {
  const rows: string[] = [
    '| document | declares | loads | expected | found | with the expected identity | safe identities (of those a person sees) | known gaps | seconds |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  const misses: string[] = [];
  const total = { expected: 0, found: 0, right: 0, safe: 0, safeExpected: 0, gaps: 0 };
  for (const m of measured) {
    const e = m.expectation;
    let found = 0;
    let right = 0;
    let safe = 0;
    const safeExpected = e.types.filter((t) => t.identity === 'safe').length;
    const gaps = e.types.filter((t) => t.gap !== undefined).length;
    for (const t of e.types) {
      const run = t.overlay ? m.withOverlay : m.plain;
      const report = run?.report;
      const label = `\`${t.path}\`${t.overlay ? ' (with the overlay)' : ''}`;
      if (report === undefined) {
        misses.push(`- ${e.slug}: **${t.name}** ${label}: the document did not load`);
        continue;
      }
      const verdict = meets(t, report);
      if (verdict.found === undefined) {
        misses.push(`- ${e.slug}: **${t.name}** ${label}: ${verdict.problem ?? 'not found'}`);
        continue;
      }
      found += 1;
      if (t.identity === 'safe' && verdict.found.identity !== null) safe += 1;
      if (verdict.ok) right += 1;
      else misses.push(`- ${e.slug}: **${t.name}** ${label}: ${verdict.problem ?? ''}`);
    }
    const loads = m.plain.report
      ? 'yes'
      : m.plain.refused
        ? `refused (${m.plain.refused.code})`
        : `crashed: ${m.plain.crashed ?? '?'}`;
    rows.push(
      `| ${e.document} | ${m.declaredVersion} | ${loads.replace(/\|/g, '\\|').slice(0, 80)} | ${e.types.length} | ${found} | ${right} | ${safe} of ${safeExpected} | ${gaps} | ${(m.plain.ms / 1000).toFixed(1)} |`,
    );
    total.expected += e.types.length;
    total.found += found;
    total.right += right;
    total.safe += safe;
    total.safeExpected += safeExpected;
    total.gaps += gaps;
  }
  rows.push(
    `| **${measured.length} documents** | | | **${total.expected}** | **${total.found}** | **${total.right}** | **${total.safe} of ${total.safeExpected}** | **${total.gaps}** | |`,
  );
  return [
    rows.join('\n'),
    '',
    `Expected types not found, or found without the identity a person expects (${misses.length}):`,
    '',
    ...(misses.length > 0 ? misses : ['- none']),
    '',
  ].join('\n');
}
