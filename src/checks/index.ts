// Checks: postconditions declared next to resources (DESIGN.md §1.4), run after changes and continuously.
export type { CheckContext } from './check-context.js';
export { parseCel, runCelCheck } from './cel-check.js';
export { runDnsCheck } from './dns-check.js';
export { parseServer, queryDns } from './dns-query.js';
export type { DnsFailure, DnsResponse, DnsServer } from './dns-query.js';
export {
  DNS_TYPES,
  DNS_TYPE_SYNTAX,
  isDnsType,
  normalizeExpected,
  normalizeName,
  presentAnswer,
} from './dns-records.js';
export type { DnsType, Normalized } from './dns-records.js';
export { runHttpCheck } from './http-check.js';
export { CHECK_KINDS, runCheck } from './run-check.js';
export { judgeSqlRows, MAX_EVIDENCE, runSqlCheck, sqlEvidence, sqlText } from './sql-check.js';
export { runTlsCheck } from './tls-check.js';
export type { SqlFailure, SqlQueryRequest, SqlRows, SqlRunner } from './sql-check.js';
