import type { ComplianceOptions } from '../commands/compliance.js';
import { compliance, complianceSarif, complianceView } from '../../app/index.js';
import { reportFails } from '../../core/index.js';
import { cliContext, fail, output, workspaceOptions } from '../common.js';
import { COMPLIANCE_EXIT } from '../exit-codes.js';
import { renderComplianceReport } from '../render/compliance.js';

/** `tend compliance [dir]`, run: exit 1 when a deny or warn result is open, 2 on an error. */
export async function complianceHandler(dir: string, o: ComplianceOptions): Promise<void> {
  const format = o.format ?? (o.json ? 'json' : 'text');
  const out = output(format !== 'text');
  try {
    const answer = await compliance(cliContext(), {
      ...workspaceOptions(dir, o),
      ...(o.since !== undefined ? { since: o.since } : {}),
      limit: o.limit,
    });
    if (format === 'sarif') out.data(complianceSarif(answer));
    else if (format === 'json') out.data(complianceView(answer));
    else for (const line of renderComplianceReport(answer.report, out.style)) out.line(line);
    process.exitCode = reportFails(answer.report) ? COMPLIANCE_EXIT.open : COMPLIANCE_EXIT.clean;
  } catch (e) {
    fail(out, e);
    process.exitCode = COMPLIANCE_EXIT.error;
  }
}
