// The measured summary that corpus.test.ts writes into test/corpus/README.md when run with
// TEND_CORPUS_REPORT=1: the held-out figure first (the one the README quotes), then per document of
// each set how many expected types inspect finds and how many with the identity a person expects,
// and for every miss what inspect says.
import type { Expectation, Inspection } from './corpus.js';
import { meets, score } from './corpus.js';
import { FLOORS, ratio, totals } from './held-out.js';

export const SUMMARY_START = '<!-- corpus-summary:start (written by TEND_CORPUS_REPORT=1) -->';
export const SUMMARY_END = '<!-- corpus-summary:end -->';

export interface Measured {
  readonly expectation: Expectation;
  readonly plain: Inspection;
  readonly withOverlay?: Inspection;
  readonly declaredVersion: string;
}

/** The held-out figure, the held-out table, then the tuned table, each with its misses. */
export function renderSummary(measured: readonly Measured[]): string {
  const heldOut = measured.filter((m) => m.expectation.set === 'held-out');
  const tuned = measured.filter((m) => m.expectation.set === 'tuned');
  return [renderHeldOut(heldOut), '### Tuned documents', '', renderTuned(tuned)].join('\n');
}

function loads(m: Measured): string {
  const text = m.plain.report
    ? 'yes'
    : m.plain.refused
      ? `refused (${m.plain.refused.code})`
      : `crashed: ${m.plain.crashed ?? '?'}`;
  return text.replace(/\|/g, '\\|').slice(0, 80);
}

/** The held-out documents: the figure, one row per document against its floor, every miss. */
export function renderHeldOut(measured: readonly Measured[]): string {
  const scores = measured.map((m) => score(m.expectation, m.plain));
  const t = totals(scores);
  const rows = [
    '| document | declares | loads | expected | found | with the expected identity | wrong natural keys | floor (found, identity) | seconds |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  const misses: string[] = [];
  measured.forEach((m, i) => {
    const s = scores[i]!;
    const floor = FLOORS[m.expectation.slug];
    rows.push(
      `| ${m.expectation.document} | ${m.declaredVersion} | ${loads(m)} | ${s.expected} | ${s.found} | ${s.identity} | ${s.wrongKeys.length} | ${floor ? `${floor.found}, ${floor.identity}` : 'none'} | ${(m.plain.ms / 1000).toFixed(1)} |`,
    );
    for (const miss of s.misses) misses.push(`- ${m.expectation.slug}: ${miss}`);
    for (const k of s.wrongKeys) misses.push(`- ${m.expectation.slug}: wrong natural key: ${k}`);
  });
  rows.push(
    `| **${t.documents} documents** | | | **${t.expected}** | **${t.found}** | **${t.identity}** | **${t.wrongKeys}** | | |`,
  );
  return [
    `**The held-out figure** (${t.documents} documents the inference was never tuned on): **${ratio(t.found, t.expected)}** of the expected types found; **${ratio(t.identity, t.expected)}** with the identity a person expects; **${t.wrongKeys}** natural keys on a field the document does not support.`,
    '',
    '### Held-out documents',
    '',
    rows.join('\n'),
    '',
    `Held-out types not found, or found without the identity a person expects (${misses.length}), with what inspect says:`,
    '',
    ...(misses.length > 0 ? misses : ['- none']),
    '',
  ].join('\n');
}

/** One row per tuned document, a total, then every expected type that is missing or wrong, with why. */
export function renderTuned(measured: readonly Measured[]): string {
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
    rows.push(
      `| ${e.document} | ${m.declaredVersion} | ${loads(m)} | ${e.types.length} | ${found} | ${right} | ${safe} of ${safeExpected} | ${gaps} | ${(m.plain.ms / 1000).toFixed(1)} |`,
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
    `Tuned types not found, or found without the identity a person expects (${misses.length}):`,
    '',
    ...(misses.length > 0 ? misses : ['- none']),
    '',
  ].join('\n');
}
