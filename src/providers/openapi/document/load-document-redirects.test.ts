// Fetching an OpenAPI document follows redirects within its origin only; its credentials (the
// provider's auth header, user-info) never reach another origin. Two real servers.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TendError } from '../../../core/index.js';
import type { RecordingServer } from '../../../../test/support/recording-server.js';
import { json, redirect, startRecordingServer } from '../../../../test/support/recording-server.js';
import { loadOpenApiDocument } from './load-document.js';

const KEY = 'doc-key-0123456789';
const DOC = { openapi: '3.0.3', info: { title: 't', version: '1' }, paths: {} };

let platform: RecordingServer;
let other: RecordingServer;

beforeAll(async () => {
  platform = await startRecordingServer();
  other = await startRecordingServer((_req, res) => json(res, 200, DOC));
});
afterAll(async () => {
  await platform.stop();
  await other.stop();
});
beforeEach(() => {
  platform.clear();
  other.clear();
  platform.handle((req, res) => {
    if (req.url === '/openapi.json') json(res, 200, DOC);
    else if (req.url === '/old.json') redirect(res, 301, '/openapi.json');
    else redirect(res, 302, `${other.url}/openapi.json`);
  });
});

describe('fetching a document through redirects', () => {
  it('follows a redirect within the origin, with the credentials', async () => {
    const doc = await loadOpenApiDocument(`${platform.url}/old.json`, {
      headers: { 'X-API-Key': KEY },
    });
    expect(doc.version).toBe('3.0.3');
    expect(platform.requests.map((r) => [r.url, r.headers['x-api-key']])).toEqual([
      ['/old.json', KEY],
      ['/openapi.json', KEY],
    ]);
  });

  it('refuses one to another origin: nothing is sent there', async () => {
    const url = `http://user:pa55word@${platform.url.slice('http://'.length)}/elsewhere.json`;
    const err = await loadOpenApiDocument(url, { headers: { 'X-API-Key': KEY } }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TendError);
    const e = err as TendError;
    expect(e.code).toBe('http.redirect_refused');
    expect(e.phase).toBe('load');
    expect(e.message).toBe(
      `cannot fetch OpenAPI document ${platform.url}/elsewhere.json: ${platform.url} redirected (302) to another origin, ${other.url}; not followed, so no credentials or request body went there`,
    );
    expect(e.message).not.toContain('pa55word');
    expect(other.requests).toEqual([]);
  });

  it('with the origin allowed, follows without the auth header or the user-info', async () => {
    const url = `http://user:pa55word@${platform.url.slice('http://'.length)}/elsewhere.json`;
    const doc = await loadOpenApiDocument(url, {
      headers: { 'X-API-Key': KEY },
      allowRedirectsTo: [other.url],
    });
    expect(doc.version).toBe('3.0.3');
    expect(platform.requests[0]!.headers['authorization']).toMatch(/^Basic /);
    expect(other.requests).toHaveLength(1);
    expect(other.requests[0]!.headers['x-api-key']).toBeUndefined();
    expect(other.requests[0]!.headers['authorization']).toBeUndefined();
  });
});
