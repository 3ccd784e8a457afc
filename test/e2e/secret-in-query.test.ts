import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import type { RecordingServer } from '../support/recording-server.js';
import { json, startRecordingServer } from '../support/recording-server.js';
import { filesUnder, leaks } from '../support/secret-leaks.js';

// A secret field that the create sends in its query string (`POST /users?pw=…`, create-query.ts):
// the URL carries it, so nothing Tend prints or keeps may carry the URL with it — not the error of a
// refused create, even when the platform quotes the whole request line back, not `--json` events,
// not the journal or the ledger. The platform is a real HTTP server on 127.0.0.1 that records what
// it got (so the test knows the secret was sent) and answers as each case says.

// Characters that URL-, form- and JSON-encoding all change.
const SECRET = `pw/${'Q7x'.repeat(6)}+= "&ü"%`;
const env = { ALICE_PW: SECRET };

const USER = {
  type: 'object',
  properties: { id: { type: 'integer', readOnly: true }, name: { type: 'string' } },
};
const DOCUMENT = {
  openapi: '3.0.0',
  info: { title: 'accounts', version: '1' },
  paths: {
    '/users': {
      get: {
        responses: {
          '200': {
            description: 'users',
            content: { 'application/json': { schema: { type: 'array', items: USER } } },
          },
        },
      },
      post: {
        parameters: [
          {
            name: 'pw',
            in: 'query',
            required: true,
            'x-tend-sensitive': true,
            schema: { type: 'string' },
          },
        ],
        requestBody: {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['name'],
                properties: { name: { type: 'string' } },
              },
            },
          },
        },
        responses: {
          '201': { description: 'created', content: { 'application/json': { schema: USER } } },
        },
      },
    },
    '/users/{name}': {
      get: {
        responses: {
          '200': { description: 'user', content: { 'application/json': { schema: USER } } },
        },
      },
      delete: { responses: { '204': { description: 'gone' } } },
    },
  },
};

let server: RecordingServer;
let dir: string;
const users = new Map<string, Record<string, unknown>>();

beforeAll(async () => {
  server = await startRecordingServer();
});
afterAll(async () => {
  await server?.stop();
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tend-secret-in-query-'));
  server.clear();
  users.clear();
  writeFileSync(join(dir, 'accounts.json'), JSON.stringify(DOCUMENT));
  writeFileSync(
    join(dir, 'provider.yaml'),
    [
      'kind: Provider',
      'name: acct',
      'type: openapi',
      'spec: ./accounts.json',
      `endpoint: ${server.url}`,
      '---',
      'kind: Resource',
      'type: acct.users',
      'name: alice',
      'spec:',
      '  name: alice',
      '  pw: { fromEnv: ALICE_PW }',
      '',
    ].join('\n'),
  );
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Answers the list and reads from `users`; a create as `create` says. */
function platform(create: (url: URL, raw: string) => { status: number; body: unknown }): void {
  server.handle((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (req.method === 'GET' && url.pathname === '/users')
      return json(res, 200, [...users.values()]);
    if (req.method === 'POST' && url.pathname === '/users') {
      const a = create(url, req.url);
      return json(res, a.status, a.body);
    }
    const m = /^\/users\/([^/]+)$/.exec(url.pathname);
    const found = m ? users.get(decodeURIComponent(m[1]!)) : undefined;
    if (req.method === 'GET' && found) return json(res, 200, found);
    json(res, 404, { message: `no user at ${req.url}` });
  });
}

/** Runs `tend` in the intent directory; keeps what it printed. */
async function tend(
  outputs: { what: string; text: string }[],
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const r = await runCli([...args, dir], { env });
  outputs.push(
    { what: `tend ${args.join(' ')} stdout`, text: r.stdout },
    { what: `tend ${args.join(' ')} stderr`, text: r.stderr },
  );
  return r;
}

/** The secret as the platform got it: in the create's query string, and only there. */
function sentInQueryOnly(): void {
  const creates = server.requests.filter((r) => r.method === 'POST');
  expect(creates.length).toBeGreaterThan(0);
  for (const c of creates) {
    expect(new URL(c.url, 'http://x').searchParams.get('pw')).toBe(SECRET);
    expect(JSON.parse(c.body)).toEqual({ name: 'alice' });
  }
}

describe('a secret sent in a create’s query string never reaches Tend’s output or .tend/', () => {
  it('validate warns where the secret is written, and it is valid (exit 0)', async () => {
    platform(() => ({ status: 500, body: {} }));
    const outputs: { what: string; text: string }[] = [];
    const checked = await tend(outputs, ['validate']);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    const text = checked.stdout + checked.stderr;
    expect(text).toContain(`${join(dir, 'provider.yaml')}:12:7`);
    expect(text).toContain('secret.in_url');
    expect(text).toContain(
      "`spec.pw` is a secret, and users objects are created with it in the URL's query string",
    );
    const machine = await tend(outputs, ['validate', '--json']);
    const diagnostics = (
      JSON.parse(machine.stdout) as {
        diagnostics: { code: string; severity: string; line: number }[];
      }
    ).diagnostics;
    expect(diagnostics.filter((d) => d.code === 'secret.in_url')).toEqual([
      expect.objectContaining({ severity: 'warning', line: 12 }),
    ]);
    expect(server.requests.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(leaks([SECRET], outputs, [])).toEqual([]);
  });

  // Platforms that quote the request back: the request line as received (URL-encoded), and the
  // parameter decoded.
  const refusals: { name: string; status: number; message: (url: URL, raw: string) => string }[] = [
    {
      name: '422 quoting the whole request line',
      status: 422,
      message: (_url, raw) => `POST ${raw} refused: password too weak`,
    },
    {
      name: '400 quoting the decoded parameter',
      status: 400,
      message: (url) => `pw ${JSON.stringify(url.searchParams.get('pw'))} is not allowed`,
    },
  ];
  for (const c of refusals) {
    it(`${c.name}: the error says the create failed, without the secret`, async () => {
      platform((url, raw) => ({ status: c.status, body: { message: c.message(url, raw) } }));
      const outputs: { what: string; text: string }[] = [];
      const human = await tend(outputs, ['apply', '--no-checks']);
      expect(human.code, human.stdout + human.stderr).toBe(1);
      expect(human.stdout + human.stderr).toContain('POST /users');
      const machine = await tend(outputs, ['apply', '--no-checks', '--json']);
      expect(machine.code, machine.stdout + machine.stderr).toBe(1);
      expect(machine.stdout + machine.stderr).toContain('POST /users');
      await tend(outputs, ['history', '--json']);
      await tend(outputs, ['status', '--json']);
      sentInQueryOnly();
      // The platform's own words are kept, the secret in them redacted.
      expect(outputs.map((o) => o.text).join('\n')).toContain('«redacted»');
      expect(leaks([SECRET], outputs, filesUnder(join(dir, '.tend')))).toEqual([]);
    });
  }

  it('500 quoting the request line: the create stays unsettled in the journal, without the secret', async () => {
    platform((_url, raw) => ({
      status: 500,
      body: { message: `internal error handling POST ${raw}` },
    }));
    const outputs: { what: string; text: string }[] = [];
    // The platform may have acted: the journal looks the user up until its consistency window has
    // passed, then leaves the create pending (not resent blindly).
    const applied = await tend(outputs, ['apply', '--no-checks', '--json']);
    expect(applied.stdout + applied.stderr).toContain('"outcomeUnknown":true');
    // Not settled is not done: the apply says so in its exit code (1: an unverified operation).
    expect(applied.code, applied.stdout + applied.stderr).toBe(1);
    expect(applied.stdout).toContain('"verdict": "failed"');
    await tend(outputs, ['history', '--json']);
    await tend(outputs, ['status', '--json']);
    sentInQueryOnly();
    expect(outputs.map((o) => o.text).join('\n')).toContain('POST /users?pw=«redacted»');
    expect(leaks([SECRET], outputs, filesUnder(join(dir, '.tend')))).toEqual([]);
  }, 90_000);

  it('created: plan, apply, history and status never show it', async () => {
    platform(() => {
      const user = { id: 1, name: 'alice' };
      users.set('alice', user);
      return { status: 201, body: user };
    });
    const outputs: { what: string; text: string }[] = [];
    const applied = await tend(outputs, ['apply', '--no-checks', '--json']);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    const again = await tend(outputs, ['plan', '--json']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    await tend(outputs, ['history', '--json']);
    await tend(outputs, ['status', '--json']);
    sentInQueryOnly();
    expect(server.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    expect(leaks([SECRET], outputs, filesUnder(join(dir, '.tend')))).toEqual([]);
  });
});
