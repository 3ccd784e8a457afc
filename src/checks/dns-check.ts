import type { CheckResult, DnsCheckDecl } from '../core/index.js';
import type { CheckContext } from './check-context.js';
import { parseServer, queryDns } from './dns-query.js';
import { isDnsType, normalizeExpected, normalizeName, presentAnswer } from './dns-records.js';

function list(values: readonly string[]): string {
  return values.join(', ');
}

/**
 * Runs a DNS check: asks `server` for `query`/`type` and passes when the answers of that type,
 * compared as a set in one presentation (names lower-case with a trailing dot, TXT quoted as
 * PowerDNS shows it), are exactly `expect`. An empty `expect` passes when there is no record of
 * the type (NOERROR without answers, or NXDOMAIN). References in server, query and expected answers
 * are substituted first. Never throws: a failure says what was expected and what came instead
 * (other answers, NXDOMAIN or another rcode, no answer within timeoutMs, a network error).
 */
export async function runDnsCheck(check: DnsCheckDecl, ctx: CheckContext): Promise<CheckResult> {
  const result = (ok: boolean, message: string): CheckResult => ({
    name: check.name,
    kind: 'dns',
    ok,
    message,
    at: ctx.now().toISOString(),
  });
  const serverText = ctx.resolve(check.server);
  const queryText = ctx.resolve(check.query);
  const expectText = check.expect.map((e) => ctx.resolve(e));
  if (serverText === undefined || queryText === undefined || expectText.includes(undefined)) {
    return result(
      false,
      `references in the check cannot be resolved yet (${check.type} ${check.query} @${check.server})`,
    );
  }
  const type = check.type.toUpperCase();
  const what = `${type} ${queryText} @${serverText}`;
  // Intent validation refuses these before anything runs; a reference may still fill in a bad value.
  if (!isDnsType(type)) return result(false, `${what}: unsupported record type ${check.type}`);
  const server = parseServer(serverText);
  if (!server) return result(false, `${what}: server must be host:port, got ${serverText}`);
  const name = normalizeName(queryText);
  if (name === undefined) return result(false, `${what}: ${queryText} is not a DNS name`);
  const expected = new Set<string>();
  for (const text of expectText as string[]) {
    const n = normalizeExpected(type, text);
    if ('error' in n) return result(false, `${what}: expected answer ${n.error}`);
    expected.add(n.value);
  }

  const asked = await queryDns(server, name, type, {
    timeoutMs: check.timeoutMs,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  if (!asked.ok) {
    const f = asked.failure;
    if (f.kind === 'timeout')
      return result(false, `${what}: no answer within ${check.timeoutMs} ms`);
    if (f.kind === 'aborted') return result(false, `${what}: check aborted`);
    return result(false, `${what} failed: ${f.message}`);
  }
  const { rcode, answers } = asked.response;
  const want = [...expected].sort();
  const wanted = want.length === 0 ? 'no records' : list(want);
  if (rcode !== 'NOERROR' && !(rcode === 'NXDOMAIN' && want.length === 0)) {
    return result(false, `${what}: expected ${wanted}, got ${rcode}`);
  }
  const got = [
    ...new Set(
      answers
        .filter((a) => a.type === type)
        .map(presentAnswer)
        .filter((v) => v !== undefined),
    ),
  ].sort();
  const missing = want.filter((v) => !got.includes(v));
  const extra = got.filter((v) => !expected.has(v));
  if (missing.length === 0 && extra.length === 0) {
    if (got.length > 0) return result(true, `${what} answered ${list(got)}`);
    return result(
      true,
      `${what} answered ${rcode === 'NXDOMAIN' ? 'NXDOMAIN' : 'no records'}, as expected`,
    );
  }
  if (got.length === 0) return result(false, `${what}: expected ${wanted}, got no records`);
  const detail = [
    missing.length > 0 ? `missing ${list(missing)}` : '',
    extra.length > 0 ? `unexpected ${list(extra)}` : '',
  ].filter((s) => s !== '');
  const tail = want.length === 0 ? '' : ` (${detail.join('; ')})`;
  return result(false, `${what}: expected ${wanted}, got ${list(got)}${tail}`);
}
