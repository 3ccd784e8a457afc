import type { CheckDecl, CheckResult } from '../core/index.js';
import { runCelCheck } from './cel-check.js';
import type { CheckContext } from './check-context.js';
import { runDnsCheck } from './dns-check.js';
import { runHttpCheck } from './http-check.js';
import { runSqlCheck } from './sql-check.js';
import { runTlsCheck } from './tls-check.js';

/** The check kinds `runCheck` can run, as written in intent. */
export const CHECK_KINDS = [
  'http',
  'cel',
  'dns',
  'sql',
  'tls',
] as const satisfies readonly CheckDecl['kind'][];

/** Runs one check against a resource and reports whether it holds. Never throws. */
export async function runCheck(check: CheckDecl, context: CheckContext): Promise<CheckResult> {
  switch (check.kind) {
    case 'http':
      return runHttpCheck(check, context);
    case 'cel':
      return Promise.resolve(runCelCheck(check, context));
    case 'dns':
      return runDnsCheck(check, context);
    case 'sql':
      return runSqlCheck(check, context);
    case 'tls':
      return runTlsCheck(check, context);
  }
}
