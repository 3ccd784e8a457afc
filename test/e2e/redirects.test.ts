import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import type { RecordedRequest, RecordingServer } from '../support/recording-server.js';
import { json, redirect, startRecordingServer } from '../support/recording-server.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { startSandboxInProcess } from '../support/sandbox-process.js';

// Credentials never cross origins, through the built `tend` command. The platform is a real
// sandbox (which requires its API key) behind a front server on 127.0.0.1 that can answer with
// redirects; the "other origin" is a second server on another port that records what reaches it.

const KEY = 'sb-key-9f8e7d6c5b4a';
const PASSWORD = 'admin-pw-never-forwarded';
const env = { SB_KEY: KEY, WEB_PASSWORD: PASSWORD };

let sandbox: SandboxHandle;
let front: RecordingServer;
let other: RecordingServer;
let dir: string;

/** How the front answers: proxy everything, or redirect some requests first. */
let route: (req: RecordedRequest, res: ServerResponse) => boolean = () => false;

async function proxy(req: RecordedRequest, res: ServerResponse, path: string): Promise<void> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) {
      headers[k] = v;
    }
  }
  const r = await fetch(`${sandbox.url}${path}`, {
    method: req.method,
    headers,
    ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body: req.body }),
    redirect: 'manual',
  });
  const text = await r.text();
  const type = r.headers.get('content-type');
  res.writeHead(r.status, type ? { 'content-type': type } : {}).end(text);
}

function intent(extra = ''): void {
  writeFileSync(
    join(dir, 'provider.yaml'),
    [
      'kind: Provider',
      'name: sb',
      'type: openapi',
      `spec: ${front.url}/openapi.json`,
      `endpoint: ${front.url}`,
      'auth: { header: X-API-Key, fromEnv: SB_KEY }',
      extra,
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'app.yaml'),
    [
      'kind: Resource',
      'type: sb.networks',
      'name: main',
      'spec: { name: main, cidr: 10.10.0.0/16 }',
      '---',
      'kind: Resource',
      'type: sb.instances',
      'name: web',
      'spec:',
      '  name: web-1',
      '  network_id: ${sb.networks/main.id}',
      '  size: small',
      '  image: debian-12',
      '  admin_password: { fromEnv: WEB_PASSWORD }',
    ].join('\n'),
  );
}

/** Everything a run left where a user (or a log collector) could read it. */
function output(r: { stdout: string; stderr: string }): string {
  const files = readdirSync(join(dir, '.tend'), { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, '.tend', f))
    .filter((f) => statSync(f).isFile())
    .map((f) => readFileSync(f).toString('latin1'));
  return [r.stdout, r.stderr, ...files].join('\n');
}

beforeAll(async () => {
  sandbox = await startSandboxInProcess({ port: 0, apiKey: KEY });
  other = await startRecordingServer((_req, res) => json(res, 200, {}));
  front = await startRecordingServer((req, res) => {
    if (!route(req, res)) void proxy(req, res, req.url);
  });
});
afterAll(async () => {
  await front?.stop();
  await other?.stop();
  await sandbox?.stop();
});
beforeEach(async () => {
  await sandbox.reset();
  dir = mkdtempSync(join(tmpdir(), 'tend-redirects-'));
  front.clear();
  other.clear();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('a platform that redirects a create to another origin (tend apply)', () => {
  for (const status of [307, 302]) {
    it(`${status}: the other server gets nothing; the create fails naming both origins`, async () => {
      route = (req, res) => {
        if (req.method !== 'POST' || req.url !== '/instances') return false;
        redirect(res, status, `${other.url}/instances`);
        return true;
      };
      intent();
      const r = await runCli(['apply', dir, '--no-checks'], { env });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout + r.stderr).toContain(
        `POST /instances: ${front.url} redirected (${status}) to another origin, ${other.url}; not followed, so no credentials or request body went there`,
      );
      expect(r.stdout + r.stderr).toContain('http.redirect_refused');
      // The instance's create, body and all, reached the front and never the other server (after a
      // 302 the create may have happened, so the journal looks and sends it again: refused again).
      const creates = front.requests.filter((q) => q.method === 'POST' && q.url === '/instances');
      expect(creates.length).toBeGreaterThanOrEqual(1);
      expect(creates[0]!.body).toContain(PASSWORD);
      expect(other.requests).toEqual([]);
      expect(output(r)).not.toContain(KEY);
    });
  }

  it('with allowRedirectsTo naming it, the other server gets the GET a 302 makes, without key or body', async () => {
    route = (req, res) => {
      if (req.method !== 'POST' || req.url !== '/instances') return false;
      redirect(res, 302, `${other.url}/instances`);
      return true;
    };
    intent(`allowRedirectsTo: ['${other.url}']`);
    await runCli(['apply', dir, '--no-checks'], { env });
    expect(other.requests.length).toBeGreaterThan(0);
    for (const q of other.requests) {
      expect(q.method).toBe('GET');
      expect(q.headers['x-api-key']).toBeUndefined();
      expect(q.body).toBe('');
    }
    expect(JSON.stringify(other.requests)).not.toContain(KEY);
    expect(JSON.stringify(other.requests)).not.toContain(PASSWORD);
  });
});

describe('a platform whose document redirects to another origin (tend validate)', () => {
  it('the provider does not load; the other server gets nothing', async () => {
    route = (req, res) => {
      if (req.url !== '/openapi.json') return false;
      redirect(res, 302, `${other.url}/openapi.json`);
      return true;
    };
    intent();
    const r = await runCli(['validate', dir], { env });
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain('http.redirect_refused');
    expect(r.stdout + r.stderr).toContain(
      `${front.url} redirected (302) to another origin, ${other.url}; not followed`,
    );
    expect(other.requests).toEqual([]);
  });
});

describe('a platform that redirects within its own origin', () => {
  it('every request, the document included, is followed with the key: apply converges', async () => {
    // Each request is first sent to /v1/…, which redirects (307) to the real path.
    route = (req, res) => {
      if (req.url.startsWith('/v1/')) return false;
      redirect(res, req.method === 'GET' ? 301 : 307, `/v1${req.url}`);
      return true;
    };
    const served = front.requests;
    const real = (q: RecordedRequest) => q.url.startsWith('/v1/');
    front.handle((req, res) => {
      if (!route(req, res)) void proxy(req, res, req.url.slice('/v1'.length));
    });
    try {
      intent();
      const r = await runCli(['apply', dir, '--no-checks'], { env });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const objects = await sandbox.objects();
      expect(objects.map((o) => o.type).sort()).toEqual(['instances', 'networks']);
      expect(served.some((q) => q.url === '/v1/openapi.json')).toBe(true);
      expect(served.filter(real).every((q) => q.headers['x-api-key'] === KEY)).toBe(true);
      expect(served.find((q) => q.url === '/v1/instances' && q.method === 'POST')?.body).toContain(
        PASSWORD,
      );
      expect(other.requests).toEqual([]);
    } finally {
      front.handle((req, res) => {
        if (!route(req, res)) void proxy(req, res, req.url);
      });
    }
  });
});
