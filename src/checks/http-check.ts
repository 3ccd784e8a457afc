import type { CheckResult, HttpCheckDecl } from '../core/index.js';
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  TendError,
  fetchFollowingRedirects,
  formatBytes,
  readBoundedText,
  withUserAgent,
} from '../core/index.js';
import type { CheckContext } from './check-context.js';

function statuses(list: readonly number[]): string {
  return list.join(' or ');
}

/** The reason a fetch failed, from the network error underneath undici's "fetch failed". */
function networkReason(e: unknown): string {
  if (e instanceof Error) {
    const cause = e.cause;
    if (cause instanceof Error && cause.message) return cause.message;
    return e.message;
  }
  return String(e);
}

/**
 * Runs an HTTP check: sends the request with the check's timeout and passes when the status is one
 * of `expectStatus` and, if set, the body contains `bodyContains`. References in the URL and the
 * expected text are substituted first. Redirects are followed (at most 5) within the URL's origin,
 * or to an origin in `allowRedirectsTo`; a redirect whose status is expected is not followed; one
 * to another origin fails the check. Never throws: every failure is a result saying what was
 * expected and what happened instead (the status, the refused redirect, the network error, or the
 * timeout).
 */
export async function runHttpCheck(check: HttpCheckDecl, ctx: CheckContext): Promise<CheckResult> {
  const result = (ok: boolean, message: string): CheckResult => ({
    name: check.name,
    kind: 'http',
    ok,
    message,
    at: ctx.now().toISOString(),
  });
  const url = ctx.resolve(check.url);
  const expected = check.bodyContains === undefined ? undefined : ctx.resolve(check.bodyContains);
  if (url === undefined || (check.bodyContains !== undefined && expected === undefined)) {
    return result(false, `references in the check cannot be resolved yet (${check.url})`);
  }
  const what = `${check.method} ${url}`;
  const timeout = AbortSignal.timeout(check.timeoutMs);
  const signal = ctx.signal ? AbortSignal.any([timeout, ctx.signal]) : timeout;
  const doFetch = ctx.fetch ?? fetch;
  try {
    const { response: res } = await fetchFollowingRedirects(
      doFetch,
      url,
      { method: check.method, headers: withUserAgent({}, ctx.userAgent), signal },
      {
        what,
        optIn: "the check's allowRedirectsTo",
        urlSetting: "the check's url",
        keepStatuses: check.expectStatus,
        ...(check.allowRedirectsTo ? { allowOrigins: check.allowRedirectsTo } : {}),
      },
    );
    const limit = ctx.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    // The body is read only to look for `bodyContains`, counted as it comes, never past the limit.
    const read = expected === undefined ? undefined : await readBoundedText(res, limit);
    if (expected === undefined) await res.body?.cancel();
    if (read?.ok === false) {
      return result(
        false,
        `${what} answered ${res.status} with a body larger than ${formatBytes(limit)}; reading stopped there and the connection was closed`,
      );
    }
    const body = read?.text;
    if (!check.expectStatus.includes(res.status)) {
      return result(
        false,
        `${what}: expected status ${statuses(check.expectStatus)}, got ${res.status}`,
      );
    }
    if (expected !== undefined && !body?.includes(expected)) {
      return result(
        false,
        `${what} answered ${res.status} but the body does not contain ${JSON.stringify(expected)}`,
      );
    }
    const tail = expected === undefined ? '' : ` and the body contains ${JSON.stringify(expected)}`;
    return result(true, `${what} answered ${res.status}${tail}`);
  } catch (e) {
    // A refused redirect: its hint says how to allow it.
    if (e instanceof TendError) return result(false, `${e.message}; ${e.hint ?? e.code}`);
    if (timeout.aborted) return result(false, `${what}: no answer within ${check.timeoutMs} ms`);
    if (ctx.signal?.aborted) return result(false, `${what}: check aborted`);
    return result(false, `${what} failed: ${networkReason(e)}`);
  }
}
