// HTTP checks follow redirects within the URL's origin; another origin fails the check unless the
// check allows it. Two real servers.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { HttpCheckDecl } from '../core/index.js';
import type { RecordingServer } from '../../test/support/recording-server.js';
import { redirect, startRecordingServer } from '../../test/support/recording-server.js';
import { runCheck } from './index.js';

const NOW = new Date('2024-05-01T12:00:00.000Z');
let site: RecordingServer;
let other: RecordingServer;

beforeAll(async () => {
  site = await startRecordingServer((req, res) => {
    if (req.url === '/health') res.writeHead(200).end('ready');
    else if (req.url === '/old') redirect(res, 301, '/health');
    else if (req.url === '/away') redirect(res, 302, `${other.url}/health`);
    else res.writeHead(404).end();
  });
  other = await startRecordingServer((_req, res) => res.writeHead(200).end('ready elsewhere'));
});
afterAll(async () => {
  await site.stop();
  await other.stop();
});
beforeEach(() => {
  site.clear();
  other.clear();
});

function check(path: string, partial: Partial<HttpCheckDecl> = {}): HttpCheckDecl {
  return {
    kind: 'http',
    name: 'probe',
    url: `${site.url}${path}`,
    method: 'GET',
    expectStatus: [200],
    timeoutMs: 2000,
    source: { file: 'main.yaml', line: 1, column: 1 },
    ...partial,
  };
}

const run = (c: HttpCheckDecl) =>
  runCheck(c, { observed: {}, desired: {}, resolve: (t) => t, now: () => NOW });

describe('http check redirects', () => {
  it('follows one within the origin', async () => {
    const r = await run(check('/old', { bodyContains: 'ready' }));
    expect(r.ok).toBe(true);
    expect(r.message).toBe(`GET ${site.url}/old answered 200 and the body contains "ready"`);
  });

  it('fails on one to another origin, which is never asked', async () => {
    const r = await run(check('/away'));
    expect(r.ok).toBe(false);
    expect(r.message).toBe(
      `GET ${site.url}/away: ${site.url} redirected (302) to another origin, ${other.url}; not followed, so no credentials or request body went there; if ${other.url} belongs to the same platform, point the check's url at it, or list it in the check's allowRedirectsTo (credentials and request bodies are never sent to another origin)`,
    );
    expect(other.requests).toEqual([]);
  });

  it.each([[() => [other.url]], [() => ['*']]])(
    'follows one to an origin the check allows (%#)',
    async (allowed) => {
      const r = await run(
        check('/away', { allowRedirectsTo: allowed(), bodyContains: 'elsewhere' }),
      );
      expect(r.ok).toBe(true);
      expect(other.requests).toHaveLength(1);
    },
  );

  it('does not follow a redirect whose status it expects', async () => {
    const r = await run(check('/away', { expectStatus: [302] }));
    expect(r).toMatchObject({ ok: true, message: `GET ${site.url}/away answered 302` });
    expect(other.requests).toEqual([]);
  });
});
