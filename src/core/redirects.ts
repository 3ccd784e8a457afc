import { TendError } from './errors.js';
import { setKey } from './safe-keys.js';

/**
 * Redirects, followed by Tend itself so that credentials never cross origins. Every HTTP request
 * Tend makes (the provider's client, fetching an OpenAPI document or overlay, HTTP checks) goes
 * through `fetchFollowingRedirects` with `redirect: 'manual'`. The fetch is passed in: this module
 * decides, the caller does the I/O.
 *
 * The rules:
 * - at most `maxRedirects` hops (default 5), then `http.too_many_redirects`;
 * - only to the origin (scheme, host, port) of the first request, unless the caller allows other
 *   origins (`allowOrigins`); anything else is `http.redirect_refused`, naming both origins;
 * - 301/302 turn a POST into a GET, 303 turns anything but GET/HEAD into a GET (both without the
 *   body), 307/308 keep the method and the body: what fetch and browsers do;
 * - credentials (Authorization, Proxy-Authorization, Cookie and the caller's credential headers)
 *   never go to another origin, not even to an allowed one, and stay dropped for the rest of the
 *   chain once it has left the first origin; a redirect to another origin that would resend the
 *   body (307/308 with one), or whose URL carries a credential or user-info, is refused.
 */

/** How far a request may be redirected. */
export interface RedirectPolicy {
  /** Most redirects followed for one request (default 5). */
  readonly maxRedirects?: number;
  /**
   * Origins besides the first request's own (`https://host[:port]`) that a redirect may lead to,
   * or `*` for any. Credentials and request bodies are never sent to them.
   */
  readonly allowOrigins?: readonly string[];
}

/** The most redirects followed by default. */
export const DEFAULT_MAX_REDIRECTS = 5;

/** One request, as it is first sent. */
export interface RedirectableRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly signal?: AbortSignal;
}

/** What `fetchFollowingRedirects` needs besides the request. */
export interface FollowRedirectsOptions extends RedirectPolicy {
  /** The request as messages name it: `GET /volumes`, `OpenAPI document https://…`. */
  readonly what: string;
  /** Headers that carry credentials, besides Authorization, Proxy-Authorization and Cookie. */
  readonly credentialHeaders?: readonly string[];
  /** Where the user allows other origins, for the hint: `the provider's allowRedirectsTo`. */
  readonly optIn: string;
  /** The setting holding the URL, for the hint: `the provider's endpoint` (default `the URL`). */
  readonly urlSetting?: string;
  /** Statuses answered as they are rather than followed (a check that expects a 301). */
  readonly keepStatuses?: readonly number[];
}

/** The last response and where it came from. */
export interface FollowedResponse {
  readonly response: Response;
  /** The URL that answered (the first one when nothing was followed). */
  readonly url: string;
  readonly redirects: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const ALWAYS_CREDENTIALS = ['authorization', 'proxy-authorization', 'cookie'];
const BODY_HEADERS = [
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
  'content-location',
];

/**
 * Sends a request with `redirect: 'manual'` and follows redirects by the rules above. Resolves to
 * the first response that is not a redirect to follow; rejects with a TendError (`status`: the
 * redirect's) when a redirect is refused, and with whatever `doFetch` throws otherwise.
 */
export async function fetchFollowingRedirects(
  doFetch: typeof fetch,
  url: string,
  request: RedirectableRequest,
  options: FollowRedirectsOptions,
): Promise<FollowedResponse> {
  const max = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const setting = options.urlSetting ?? 'the URL';
  const first = new URL(url).origin;
  const credentials = new Set(
    [...ALWAYS_CREDENTIALS, ...(options.credentialHeaders ?? [])].map((h) => h.toLowerCase()),
  );
  const secrets = secretValues(request.headers, credentials);
  let current = url;
  let method = request.method;
  let headers = lowerKeys(request.headers);
  let body = request.body;
  for (let redirects = 0; ; redirects++) {
    const response = await doFetch(current, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
      ...(request.signal ? { signal: request.signal } : {}),
      redirect: 'manual',
    });
    const status = response.status;
    const location = response.headers.get('location');
    if (!REDIRECTS.has(status) || location === null || options.keepStatuses?.includes(status)) {
      return { response, url: current, redirects };
    }
    await discard(response);
    const from = new URL(current).origin;
    const refuse = (why: string, hint: string): TendError =>
      new TendError('http.redirect_refused', `${options.what}: ${why}`, { status, hint });
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      throw refuse(
        `${from} redirected (${status}) to an invalid location; not followed`,
        'the platform answered with a broken Location header; report it to its operators',
      );
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      throw refuse(
        `${from} redirected (${status}) to a ${next.protocol} URL; only http(s) redirects are followed`,
        `point ${setting} at where the content really is`,
      );
    }
    if (redirects >= max) {
      throw new TendError(
        'http.too_many_redirects',
        `${options.what}: more than ${max} redirects (the last from ${from} to ${next.origin}); not followed`,
        {
          status,
          hint: `a redirect loop, or a chain too long: point ${setting} at the final place`,
        },
      );
    }
    const to = next.origin;
    const crossing = to !== first;
    if (crossing && !allowed(to, options.allowOrigins)) {
      throw refuse(
        `${from} redirected (${status}) to another origin, ${to}; not followed, so no credentials or request body went there`,
        `if ${to} belongs to the same platform, point ${setting} at it, or list it in ${options.optIn} (credentials and request bodies are never sent to another origin)`,
      );
    }
    // 301/302 turn a POST into a GET; 303 anything but GET and HEAD. 307/308 change nothing.
    const toGet =
      ((status === 301 || status === 302) && method === 'POST') ||
      (status === 303 && method !== 'GET' && method !== 'HEAD');
    if (toGet) {
      method = 'GET';
      body = undefined;
      headers = without(headers, BODY_HEADERS);
    }
    if (crossing) {
      if (body !== undefined) {
        throw refuse(
          `${from} redirected (${status}) to ${to}, which would resend the request body to another origin; not followed (the body may hold secrets)`,
          `point ${setting} at ${to} directly if the platform lives there`,
        );
      }
      if (next.username !== '' || next.password !== '' || carries(next, secrets)) {
        throw refuse(
          `${from} redirected (${status}) to ${to} with credentials in the URL; not followed`,
          'the platform put a credential into the redirect; report it to its operators',
        );
      }
      // Once the chain has left the first origin, credentials stay dropped, even on the way back.
      headers = without(headers, [...credentials]);
    }
    next.username = '';
    next.password = '';
    current = next.toString();
  }
}

/** True when `origin` is in the allow-list (or the list holds `*`). */
function allowed(origin: string, list: readonly string[] | undefined): boolean {
  return (list ?? []).some((o) => o === '*' || originOf(o) === origin);
}

/** The origin of a written origin or URL, or undefined when it is not one. */
export function originOf(text: string): string | undefined {
  try {
    const u = new URL(text);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

function lowerKeys(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) setKey(out, k.toLowerCase(), v);
  return out;
}

function without(
  headers: Record<string, string>,
  names: readonly string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (!names.includes(k)) setKey(out, k, v);
  return out;
}

/** The credential values a URL must not carry: each header value and its last word (`Bearer x`). */
function secretValues(
  headers: Readonly<Record<string, string>>,
  credentials: ReadonlySet<string>,
): string[] {
  const values = new Set<string>();
  for (const [k, v] of Object.entries(headers)) {
    if (!credentials.has(k.toLowerCase())) continue;
    for (const s of [v.trim(), v.trim().split(/\s+/).pop() ?? '']) if (s.length >= 6) values.add(s);
  }
  return [...values];
}

function carries(url: URL, secrets: readonly string[]): boolean {
  if (secrets.length === 0) return false;
  let decoded = url.href;
  try {
    decoded = decodeURIComponent(url.href);
  } catch {
    // A malformed escape: the raw form is checked below.
  }
  return secrets.some((s) => url.href.includes(s) || decoded.includes(s));
}

async function discard(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // The body of a redirect is never read; a failure to drop it changes nothing.
  }
}
