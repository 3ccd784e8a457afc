// Credentials never cross origins: a platform and a second server on another port, both real.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TendError } from '../../../core/index.js';
import type { RecordingServer } from '../../../../test/support/recording-server.js';
import { json, redirect, startRecordingServer } from '../../../../test/support/recording-server.js';
import type { HttpClientOptions } from './http-client.js';
import { createHttpClient } from './http-client.js';

const KEY = 'sk-live-0123456789abcdef';
const SECRET_BODY = { name: 'web', admin_password: 'hunter2-do-not-forward' };

let platform: RecordingServer;
let other: RecordingServer;

beforeAll(async () => {
  platform = await startRecordingServer();
  other = await startRecordingServer((_req, res) => json(res, 200, { from: 'other' }));
});
afterAll(async () => {
  await platform.stop();
  await other.stop();
});
beforeEach(() => {
  platform.clear();
  other.clear();
});

function client(extra: Partial<HttpClientOptions> = {}) {
  return createHttpClient({
    baseUrl: platform.url,
    auth: { header: 'X-API-Key', value: KEY },
    maxAttempts: 3,
    baseDelayMs: 1,
    ...extra,
  });
}

/** The platform redirects every request on `path` with `status` to `to` (its own path kept). */
function platformRedirects(status: number, to: () => string) {
  platform.handle((req, res) => {
    if (req.url.startsWith('/moved'))
      redirect(res, status, `${to()}${req.url.replace('/moved', '')}`);
    else json(res, req.method === 'POST' ? 201 : 200, { at: req.url, method: req.method });
  });
}

function leaked(server: RecordingServer): string {
  return JSON.stringify(server.requests);
}

describe('redirects to another origin (refused by default)', () => {
  for (const status of [307, 302]) {
    it(`${status} after a POST: the other server gets nothing, the call fails clearly, once`, async () => {
      platformRedirects(status, () => other.url);
      const err = await client()
        .request({ method: 'POST', path: '/moved/instances', body: SECRET_BODY })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TendError);
      const e = err as TendError;
      expect(e.code).toBe('http.redirect_refused');
      expect(e.message).toBe(
        `POST /moved/instances: ${platform.url} redirected (${status}) to another origin, ${other.url}; not followed, so no credentials or request body went there` +
          (status === 302 ? '; the platform may have acted before redirecting' : ''),
      );
      expect(e.hint).toContain("the provider's allowRedirectsTo");
      // A 302 to a POST may follow a create (outcome unknown); a 307 says nothing was done.
      expect(e.outcomeUnknown).toBe(status === 302);
      expect(e.retryable).toBe(false);
      expect(other.requests).toEqual([]);
      expect(platform.requests).toHaveLength(1);
    });
  }

  it('a GET redirected with 302 is refused too, with no retry', async () => {
    platformRedirects(302, () => other.url);
    const e = (await client()
      .request({ method: 'GET', path: '/moved/instances' })
      .catch((x: unknown) => x)) as TendError;
    expect(e.code).toBe('http.redirect_refused');
    expect(e.outcomeUnknown).toBe(false);
    expect(other.requests).toEqual([]);
    expect(platform.requests).toHaveLength(1);
  });

  it('a refused redirect does not count against the circuit: the platform answered', async () => {
    platformRedirects(307, () => other.url);
    const c = client({ circuitThreshold: 1 });
    await c.request({ method: 'GET', path: '/moved/x' }).catch(() => undefined);
    expect(c.health().circuit).toBe('closed');
  });
});

describe('redirects to an allowed origin (allowRedirectsTo)', () => {
  const allowed = () => client({ redirects: { allowOrigins: [other.url] } });

  it('a GET is followed there without X-API-Key', async () => {
    platformRedirects(302, () => other.url);
    const res = await allowed().request({ method: 'GET', path: '/moved/instances' });
    expect(res.body).toEqual({ from: 'other' });
    expect(other.requests).toHaveLength(1);
    expect(other.requests[0]!.headers['x-api-key']).toBeUndefined();
    expect(leaked(other)).not.toContain(KEY);
  });

  it('a 307 POST would resend the body: refused, the other server gets nothing', async () => {
    platformRedirects(307, () => other.url);
    const e = (await allowed()
      .request({ method: 'POST', path: '/moved/instances', body: SECRET_BODY })
      .catch((x: unknown) => x)) as TendError;
    expect(e.code).toBe('http.redirect_refused');
    expect(e.message).toContain('would resend the request body to another origin');
    expect(other.requests).toEqual([]);
  });

  it('a 302 POST becomes a GET there: no key, no body', async () => {
    platformRedirects(302, () => other.url);
    await allowed().request({ method: 'POST', path: '/moved/instances', body: SECRET_BODY });
    expect(other.requests).toMatchObject([{ method: 'GET', url: '/instances', body: '' }]);
    expect(leaked(other)).not.toContain(KEY);
    expect(leaked(other)).not.toContain('hunter2');
  });

  it('an origin not on the list is still refused', async () => {
    platformRedirects(302, () => other.url);
    const c = client({ redirects: { allowOrigins: ['http://127.0.0.1:1'] } });
    const e = (await c
      .request({ method: 'GET', path: '/moved/x' })
      .catch((x: unknown) => x)) as TendError;
    expect(e.code).toBe('http.redirect_refused');
    expect(other.requests).toEqual([]);
  });
});

describe('redirects within the origin', () => {
  it('307 keeps the method, the body and the key', async () => {
    platformRedirects(307, () => platform.url);
    const res = await client().request({
      method: 'POST',
      path: '/moved/instances',
      body: SECRET_BODY,
    });
    expect(res.status).toBe(201);
    expect(platform.requests).toHaveLength(2);
    const second = platform.requests[1]!;
    expect(second).toMatchObject({ method: 'POST', url: '/instances' });
    expect(JSON.parse(second.body)).toEqual(SECRET_BODY);
    expect(second.headers['x-api-key']).toBe(KEY);
  });

  it('301 on a GET is followed with the key', async () => {
    platformRedirects(301, () => platform.url);
    const res = await client().request({ method: 'GET', path: '/moved/instances' });
    expect(res.body).toEqual({ at: '/instances', method: 'GET' });
    expect(platform.requests[1]!.headers['x-api-key']).toBe(KEY);
  });

  it('a loop stops after 5 redirects', async () => {
    platform.handle((req, res) => redirect(res, 302, req.url));
    const e = (await client()
      .request({ method: 'GET', path: '/loop' })
      .catch((x: unknown) => x)) as TendError;
    expect(e.code).toBe('http.too_many_redirects');
    expect(platform.requests).toHaveLength(6);
  });
});
