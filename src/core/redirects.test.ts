import { describe, expect, it } from 'vitest';
import { TendError } from './errors.js';
import type { FollowRedirectsOptions, RedirectableRequest } from './redirects.js';
import { fetchFollowingRedirects, originOf } from './redirects.js';

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  redirect: string | undefined;
}

/** A fetch that answers from a map of URL → [status, location?] and records every request. */
function scripted(routes: Record<string, [number, string?]>) {
  const sent: Sent[] = [];
  const doFetch = ((url: string, init: RequestInit) => {
    sent.push({
      url,
      method: init.method ?? 'GET',
      headers: { ...(init.headers as Record<string, string>) },
      body: init.body as string | undefined,
      redirect: init.redirect,
    });
    const [status, location] = routes[url] ?? [404];
    const headers = location === undefined ? undefined : { location };
    return Promise.resolve(new Response(status === 204 ? null : 'x', { status, headers }));
  }) as typeof fetch;
  return { sent, doFetch };
}

const A = 'http://a.test:8080';
const B = 'https://b.test';
const KEY = 'k3y-secret-value';

const post: RedirectableRequest = {
  method: 'POST',
  headers: { 'X-API-Key': KEY, 'Content-Type': 'application/json', 'X-Tend-Actor': 'tend' },
  body: '{"password":"hunter22"}',
};
const get: RedirectableRequest = { method: 'GET', headers: { 'X-API-Key': KEY } };
const base: FollowRedirectsOptions = {
  what: 'POST /things',
  credentialHeaders: ['X-API-Key'],
  optIn: "the provider's allowRedirectsTo",
};

describe('fetchFollowingRedirects', () => {
  const follows: {
    name: string;
    reason: string;
    routes: Record<string, [number, string?]>;
    request: RedirectableRequest;
    options?: Partial<FollowRedirectsOptions>;
    want: { status: number; sent: Partial<Sent>[] };
  }[] = [
    {
      name: 'no redirect',
      reason: 'a plain answer is returned as it is, one request, redirect: manual',
      routes: { [`${A}/x`]: [200] },
      request: get,
      want: { status: 200, sent: [{ url: `${A}/x`, redirect: 'manual' }] },
    },
    {
      name: 'same-origin 307',
      reason: '307 keeps method, body and credentials within the origin',
      routes: { [`${A}/x`]: [307, '/y'], [`${A}/y`]: [201] },
      request: post,
      want: {
        status: 201,
        sent: [
          { url: `${A}/x`, method: 'POST' },
          {
            url: `${A}/y`,
            method: 'POST',
            body: post.body,
            headers: {
              'x-api-key': KEY,
              'content-type': 'application/json',
              'x-tend-actor': 'tend',
            },
          },
        ],
      },
    },
    {
      name: 'same-origin 302 after POST',
      reason: 'a 302 turns a POST into a GET without the body, as fetch does; credentials stay',
      routes: { [`${A}/x`]: [302, `${A}/y`], [`${A}/y`]: [200] },
      request: post,
      want: {
        status: 200,
        sent: [
          { url: `${A}/x` },
          {
            url: `${A}/y`,
            method: 'GET',
            body: undefined,
            headers: { 'x-api-key': KEY, 'x-tend-actor': 'tend' },
          },
        ],
      },
    },
    {
      name: 'same-origin 303 after PUT',
      reason: '303 turns anything but GET/HEAD into a GET',
      routes: { [`${A}/x`]: [303, '/y'], [`${A}/y`]: [200] },
      request: { ...post, method: 'PUT' },
      want: { status: 200, sent: [{ method: 'PUT' }, { method: 'GET', body: undefined }] },
    },
    {
      name: 'same-origin 301 after DELETE',
      reason: '301/302 change only a POST',
      routes: { [`${A}/x`]: [301, '/y'], [`${A}/y`]: [204] },
      request: { method: 'DELETE', headers: { 'X-API-Key': KEY } },
      want: { status: 204, sent: [{ method: 'DELETE' }, { method: 'DELETE' }] },
    },
    {
      name: 'allowed cross-origin GET',
      reason: 'an allowed origin is followed without any credential header',
      routes: { [`${A}/x`]: [302, `${B}/doc`], [`${B}/doc`]: [200] },
      request: {
        method: 'GET',
        headers: {
          'X-API-Key': KEY,
          Authorization: 'Bearer t0ken-abc',
          Cookie: 'c=1',
          Accept: '*/*',
        },
      },
      options: { allowOrigins: [`${B}/`] },
      want: {
        status: 200,
        sent: [{ url: `${A}/x` }, { url: `${B}/doc`, headers: { accept: '*/*' } }],
      },
    },
    {
      name: 'allowed cross-origin and back',
      reason: 'credentials stay dropped after the chain has left the first origin',
      routes: { [`${A}/x`]: [302, `${B}/y`], [`${B}/y`]: [302, `${A}/z`], [`${A}/z`]: [200] },
      request: get,
      options: { allowOrigins: ['*'] },
      want: {
        status: 200,
        sent: [{ headers: { 'x-api-key': KEY } }, { headers: {} }, { headers: {} }],
      },
    },
    {
      name: 'cross-origin 303 after POST, allowed',
      reason:
        'the GET a 303 makes carries no body, so it may go to an allowed origin (without credentials)',
      routes: { [`${A}/x`]: [303, `${B}/done`], [`${B}/done`]: [200] },
      request: post,
      options: { allowOrigins: [B] },
      want: {
        status: 200,
        sent: [
          {},
          { url: `${B}/done`, method: 'GET', body: undefined, headers: { 'x-tend-actor': 'tend' } },
        ],
      },
    },
    {
      name: 'a kept status',
      reason: 'a check that expects a 301 sees the 301',
      routes: { [`${A}/x`]: [301, `${B}/`] },
      request: get,
      options: { keepStatuses: [301] },
      want: { status: 301, sent: [{ url: `${A}/x` }] },
    },
    {
      name: 'a 3xx without Location',
      reason: 'nothing to follow: the response is the answer',
      routes: { [`${A}/x`]: [302] },
      request: get,
      want: { status: 302, sent: [{}] },
    },
    {
      name: 'a 300',
      reason: 'Multiple Choices is not a redirect fetch follows',
      routes: { [`${A}/x`]: [300, `${B}/`] },
      request: get,
      want: { status: 300, sent: [{}] },
    },
  ];
  for (const c of follows) {
    it(`${c.name}: ${c.reason}`, async () => {
      const { sent, doFetch } = scripted(c.routes);
      const got = await fetchFollowingRedirects(doFetch, `${A}/x`, c.request, {
        ...base,
        ...c.options,
      });
      expect(got.response.status).toBe(c.want.status);
      expect(sent).toHaveLength(c.want.sent.length);
      c.want.sent.forEach((want, i) => {
        const { headers, ...rest } = want;
        expect(sent[i]).toMatchObject(rest);
        if (headers) expect(sent[i]!.headers).toEqual(headers);
      });
    });
  }

  const refusals: {
    name: string;
    reason: string;
    routes: Record<string, [number, string?]>;
    request: RedirectableRequest;
    options?: Partial<FollowRedirectsOptions>;
    code: string;
    message: RegExp;
    sent: number;
  }[] = [
    {
      name: '307 to another origin',
      reason: 'refused by default, naming both origins; nothing is sent there',
      routes: { [`${A}/x`]: [307, `${B}/x`] },
      request: post,
      code: 'http.redirect_refused',
      message:
        /^POST \/things: http:\/\/a\.test:8080 redirected \(307\) to another origin, https:\/\/b\.test; not followed/,
      sent: 1,
    },
    {
      name: '302 to another origin',
      reason: 'a GET too: the origin is the rule, not the method',
      routes: { [`${A}/x`]: [302, `${B}/x`] },
      request: get,
      code: 'http.redirect_refused',
      message: /to another origin, https:\/\/b\.test/,
      sent: 1,
    },
    {
      name: 'http to https on the same host',
      reason: 'another scheme is another origin',
      routes: { [`${A}/x`]: [301, 'https://a.test:8080/x'] },
      request: get,
      code: 'http.redirect_refused',
      message: /to another origin, https:\/\/a\.test:8080/,
      sent: 1,
    },
    {
      name: 'allowed origin, 307 with a body',
      reason: 'a body never goes to another origin, even an allowed one',
      routes: { [`${A}/x`]: [307, `${B}/x`] },
      request: post,
      options: { allowOrigins: ['*'] },
      code: 'http.redirect_refused',
      message: /would resend the request body to another origin/,
      sent: 1,
    },
    {
      name: 'allowed origin, credential in the URL',
      reason: 'a platform that copies the key into the Location does not get it sent on',
      routes: { [`${A}/x`]: [302, `${B}/x?api_key=${KEY}`] },
      request: get,
      options: { allowOrigins: [B] },
      code: 'http.redirect_refused',
      message: /with credentials in the URL/,
      sent: 1,
    },
    {
      name: 'allowed origin, user-info in the URL',
      reason: 'a Location with user:password is refused rather than sent on',
      routes: { [`${A}/x`]: [302, 'https://u:p@b.test/x'] },
      request: get,
      options: { allowOrigins: [B] },
      code: 'http.redirect_refused',
      message:
        /^POST \/things: http:\/\/a\.test:8080 redirected \(302\) to https:\/\/b\.test with credentials/,
      sent: 1,
    },
    {
      name: 'a file: Location',
      reason: 'only http(s) is followed',
      routes: { [`${A}/x`]: [302, 'file:///etc/passwd'] },
      request: get,
      code: 'http.redirect_refused',
      message: /to a file: URL/,
      sent: 1,
    },
    {
      name: 'a loop',
      reason: 'at most maxRedirects hops',
      routes: { [`${A}/x`]: [302, '/x'] },
      request: get,
      options: { maxRedirects: 3 },
      code: 'http.too_many_redirects',
      message: /more than 3 redirects/,
      sent: 4,
    },
  ];
  for (const c of refusals) {
    it(`refuses ${c.name}: ${c.reason}`, async () => {
      const { sent, doFetch } = scripted(c.routes);
      const err = await fetchFollowingRedirects(doFetch, `${A}/x`, c.request, {
        ...base,
        ...c.options,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TendError);
      const e = err as TendError;
      expect(e.code).toBe(c.code);
      expect(e.message).toMatch(c.message);
      expect(e.message).not.toContain(KEY);
      expect(e.hint).toBeDefined();
      expect(e.status).toBe(c.routes[`${A}/x`]![0]);
      expect(sent).toHaveLength(c.sent);
      expect(sent.every((s) => s.url.startsWith(A))).toBe(true);
    });
  }

  it('hints at the opt-in with the refused origin', async () => {
    const { doFetch } = scripted({ [`${A}/x`]: [307, `${B}/x`] });
    const e = (await fetchFollowingRedirects(doFetch, `${A}/x`, get, base).catch(
      (x: unknown) => x,
    )) as TendError;
    expect(e.hint).toBe(
      "if https://b.test belongs to the same platform, point the URL at it, or list it in the provider's allowRedirectsTo (credentials and request bodies are never sent to another origin)",
    );
  });
});

describe('originOf', () => {
  it.each([
    ['https://Example.org:443/', 'https://example.org'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['ftp://example.org', undefined],
    ['not a url', undefined],
  ])('%s → %s', (text, want) => expect(originOf(text)).toBe(want));
});
