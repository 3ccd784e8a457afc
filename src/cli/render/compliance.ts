import type {
  ComplianceEvent,
  ComplianceReport,
  OpenResult,
  ResourceStatus,
} from '../../core/index.js';
import { causeText, findingDenies, sourceText } from '../../core/index.js';
import type { Style } from './style.js';

/** The mark of an open result: `✗ deny`, `! warn`, `? error`, `✗ check`, `! check`, `· audit`. */
function mark(r: OpenResult, s: Style): string {
  if (r.kind === 'check') return r.result === 'warn' ? s.yellow('! check') : s.red('✗ check');
  if (r.result === 'error') return s.red('? error');
  if (r.result === 'fail') return s.red('✗ deny');
  return r.actions.includes('warn') ? s.yellow('! warn') : s.dim('· audit');
}

/** One open result: the head line, the message, the change that introduced it. */
export function renderOpenResult(r: OpenResult, s: Style): string[] {
  const what = r.kind === 'check' ? r.policy : `${r.policy} rule ${r.rule}`;
  const at = r.ruleSource ? ` ${s.dim(`(${sourceText(r.ruleSource)})`)}` : '';
  return [
    `${mark(r, s)}  ${s.bold(r.resource.address)}  ${what}${at}`,
    `    ${r.message}`,
    s.dim(
      `    ${r.cause ? `introduced by ${r.introducedBy}` : r.introducedBy}; open since ${r.since}`,
    ),
  ];
}

/** One verdict entry of the history. */
export function renderComplianceEvent(e: ComplianceEvent, s: Style): string {
  const where = e.address ?? `${e.type} ${e.objectId}`;
  const head = `${String(e.seq).padStart(4)} ${e.time}  ${where}  ${e.policy} rule ${e.rule}`;
  return e.event === 'found'
    ? `${head}  ${s.red('found')}: ${e.message}${s.dim(` (introduced by ${e.introducedBy ?? ''})`)}`
    : `${head}  ${s.green('gone')}${e.found !== undefined ? s.dim(` (found at ledger entry ${e.found})`) : ''}`;
}

/** `tend compliance` as text: a summary line, a block per open result, then the recent history. */
export function renderComplianceReport(r: ComplianceReport, s: Style): string[] {
  const c = r.summary;
  const lines = [
    `${s.bold(`compliance of ${r.workspace}`)}: ${c.fail} fail, ${c.warn} warn, ${c.error} error, ${c.pass} pass, ${c.skip} skip`,
  ];
  if (r.results.length === 0) lines.push(s.green('no open violation or failing check'));
  for (const x of r.results) for (const l of renderOpenResult(x, s)) lines.push(l);
  lines.push('');
  if (r.history.length === 0) lines.push(s.dim(`no verdict recorded since ${r.since}`));
  else {
    lines.push(s.bold(`Verdicts since ${r.since}:`));
    for (const e of r.history) lines.push(renderComplianceEvent(e, s));
  }
  return lines;
}

/**
 * The compliance lines `tend status` prints under a resource with open findings: one per broken
 * rule, with the change that introduced it (`tend compliance` gives the whole report).
 */
export function renderFindingLines(x: Pick<ResourceStatus, 'compliance'>, s: Style): string[] {
  return (x.compliance?.findings ?? []).map((f) => {
    const what =
      f.result === 'error'
        ? s.red('? error')
        : findingDenies(f)
          ? s.red('✗ deny')
          : f.actions.includes('warn')
            ? s.yellow('! warn')
            : s.dim('· audit');
    return `  ${what} policy ${f.policy} rule ${f.rule + 1}: ${f.message} ${s.dim(`(introduced by ${causeText(f.cause)})`)}`;
  });
}
