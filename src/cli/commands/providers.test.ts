import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TendError } from '../../core/index.js';
import type { InspectReport } from '../../providers/index.js';
import { inspectOpenApi } from '../../providers/index.js';
import { registerProvidersCommand } from './providers.js';

/** The keys every type of `inspect --json` has (docs/cli.md); optional ones are added per test. */
const TYPE_KEYS = [
  'collectionPath',
  'create',
  'createOnly',
  'createQuery',
  'delete',
  'envelope',
  'fields',
  'fixed',
  'idField',
  'idempotencyKey',
  'identity',
  'identityWhy',
  'importExclude',
  'itemPath',
  'lifecycle',
  'name',
  'naturalKey',
  'normalize',
  'operations',
  'outputOnly',
  'pagination',
  'parameters',
  'required',
  'sensitive',
  'serverOwned',
  'update',
  'updateMode',
  'writeOnly',
] as const;

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const SPEC = join(ROOT, 'examples/powerdns/specs/powerdns-auth-4.7.3.swagger.yaml');
const OVERLAY = join(ROOT, 'examples/powerdns/specs/pdns.overlay.yaml');

let stdout = '';
let stderr = '';
beforeEach(() => {
  stdout = '';
  stderr = '';
  process.exitCode = undefined;
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
    stdout += String(s);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
    stderr += String(s);
    return true;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

/** Runs `tend providers <args>` in-process; returns the exit code it set. */
async function tend(args: string[]): Promise<number> {
  const program = new Command().exitOverride();
  registerProvidersCommand(program);
  await program.parseAsync(['providers', ...args], { from: 'user' });
  const code = process.exitCode ?? 0;
  return typeof code === 'number' ? code : Number(code);
}

describe('tend providers inspect: PowerDNS', () => {
  it('without the overlay: the types, each saying which parameter needs a value and why it has no identity', async () => {
    expect(await tend(['inspect', SPEC])).toBe(0);
    expect(stdout).toContain('PowerDNS Authoritative HTTP API');
    expect(stdout).toContain('(swagger 2.0, read as openapi 3.0.0)');
    expect(stdout).toContain('5 resource types, 12 paths not managed, 0 warnings');
    // The document itself promises nothing about its reads.
    expect(stdout).toContain(
      '  reads may lag writes: an object created moments ago is waited for (x-tend-consistent-reads says otherwise)',
    );
    expect(stdout).toMatch(
      /zones {2}\/servers\/\{server_id\}\/zones\n {2}identity {5}none: no natural key/,
    );
    expect(stdout).toContain(
      '  parameters   {server_id} from the Provider document: parameters: {server_id: <value>}',
    );
    expect(stderr).toBe('');
  });

  it('without the overlay, says what zones need: what the hand-written overlay declares', async () => {
    expect(await tend(['inspect', SPEC, '--json'])).toBe(0);
    const zones = (JSON.parse(stdout) as InspectReport).types.find((t) => t.name === 'zones')!;
    // examples/powerdns/specs/pdns.overlay.yaml: `target: $.definitions.Zone` with these two keys.
    expect(zones.needs?.overlay).toMatchObject({
      target: '$.definitions.Zone',
      update: { 'x-tend-identity': 'natural-key', 'x-tend-natural-key': 'name' },
    });
    expect(zones.needs?.probe).toBe(
      `tend providers probe ${SPEC} --endpoint <url> --type zones --scope server_id=<value> --yes`,
    );
  });

  it('with the overlay: zones, rrsets, TSIG keys, metadata, cryptokeys and autoprimaries', async () => {
    expect(await tend(['inspect', SPEC, '--overlay', OVERLAY, '--json'])).toBe(0);
    const report = JSON.parse(stdout) as InspectReport & { ok: boolean };
    expect(report.ok).toBe(true);
    expect(report.warnings).toEqual([]);
    // The overlay promises read-your-writes (x-tend-consistent-reads on $).
    expect(report.consistentReads).toBe(true);
    const byName = Object.fromEntries(report.types.map((t) => [t.name, t]));
    expect(Object.keys(byName)).toEqual([
      'zones',
      'rrsets',
      'tsigkeys',
      'autoprimaries',
      'metadata',
      'cryptokeys',
    ]);
    expect(byName['zones']).toMatchObject({
      identity: 'natural-key',
      naturalKey: ['name'],
      idField: 'id',
      fixed: { server_id: 'localhost' },
      createOnly: ['name'],
      serverOwned: ['serial', 'notified_serial', 'edited_serial'],
      writeOnly: ['zone', 'nameservers'],
      update: { method: 'PUT', path: '/servers/{server_id}/zones/{zone_id}', partial: true },
      normalize: { name: ['lowercase', 'trailing-dot'] },
    });
    expect(byName['zones']?.fields).not.toContain('rrsets');
    expect(byName['rrsets']).toMatchObject({
      parent: { type: 'zones', field: 'zone_id' },
      embeddedIn: {
        field: 'rrsets',
        method: 'PATCH',
        op: { field: 'changetype', replace: 'REPLACE', delete: 'DELETE' },
      },
      identity: 'natural-key',
      naturalKey: ['zone_id', 'name', 'type'],
      createOnly: ['zone_id', 'name', 'type'],
      fields: ['zone_id', 'name', 'type', 'ttl', 'records', 'comments'],
      required: ['zone_id', 'name', 'type', 'ttl', 'records'],
    });
    expect(byName['tsigkeys']).toMatchObject({
      naturalKey: ['name'],
      // PowerDNS 4.7 answers a PUT with a new algorithm by adding a second key (the overlay says so).
      createOnly: ['algorithm'],
      sensitive: ['key'],
      update: { method: 'PUT', partial: true },
    });
    expect(byName['metadata']).toMatchObject({
      parent: { type: 'zones', field: 'zone_id' },
      naturalKey: ['zone_id', 'kind'],
      idField: 'kind',
      update: {
        method: 'PUT',
        path: '/servers/{server_id}/zones/{zone_id}/metadata/{metadata_kind}',
      },
    });
    expect(byName['cryptokeys']).toMatchObject({
      parent: { type: 'zones', field: 'zone_id' },
      naturalKey: ['zone_id', 'algorithm'],
      createOnly: ['zone_id', 'keytype', 'algorithm', 'bits'],
      sensitive: ['privatekey'],
    });
    // Addressed by {ip} and {nameserver} together (item-key.ts); no GET there: read from the list.
    expect(byName['autoprimaries']).toMatchObject({
      itemPath: '/servers/{server_id}/autoprimaries/{ip}/{nameserver}',
      identity: 'natural-key',
      naturalKey: ['ip', 'nameserver'],
      itemKey: [
        { param: 'ip', field: 'ip' },
        { param: 'nameserver', field: 'nameserver' },
      ],
      delete: { method: 'DELETE', path: '/servers/{server_id}/autoprimaries/{ip}/{nameserver}' },
      update: null,
    });
  });

  it('prints each type with what it needs in text', async () => {
    expect(await tend(['inspect', SPEC, '--overlay', OVERLAY])).toBe(0);
    expect(stdout).toContain('6 resource types, 12 paths not managed, 0 warnings');
    expect(stdout).toContain(
      '  id           ip ({ip}) / nameserver ({nameserver}), each URI-encoded, joined by /',
    );
    expect(stdout).toMatch(
      /\nrrsets {2}items of zones\.rrsets \(GET \/servers\/\{server_id\}\/zones\/\{zone_id\}\)/,
    );
    expect(stdout).toMatch(
      / {2}changed by {3}PATCH \/servers\/\{server_id\}\/zones\/\{zone_id\}, field rrsets with changetype REPLACE \/ DELETE/,
    );
    expect(stdout).toMatch(/ {2}server-owned serial, notified_serial, edited_serial/);
    expect(stdout).toMatch(
      /\/servers\/\{server_id\}\/zones\/\{zone_id\}\/notify\s+PUT: an action or view of zones objects/,
    );
  });
});

describe('tend providers inspect: unusable input is a report, exit 1, never a stack trace', () => {
  it.each([
    {
      name: 'a file that does not exist',
      args: ['inspect', join(ROOT, 'nope.yaml')],
      message: `error: OpenAPI document ${join(ROOT, 'nope.yaml')} does not exist; check the provider's spec path (relative paths are resolved from the intent directory)`,
    },
    {
      name: 'a JSON file that is not a document',
      args: ['inspect', join(ROOT, 'package.json')],
      message: `error: ${join(ROOT, 'package.json')} has no \`openapi\` field; point the provider's spec at an OpenAPI 3.0 or 3.1 (or Swagger 2.0) document`,
    },
    {
      name: 'an OpenAPI document given as overlay',
      args: ['inspect', SPEC, '--overlay', SPEC],
      message: `error: ${SPEC} is not an OpenAPI Overlay 1.0 document: it has no \`overlay: 1.0.0\` field; see docs/onboard-rest-api.md`,
    },
  ])('$name', async ({ args, message }) => {
    expect(await tend(args)).toBe(1);
    expect(stderr.split('\n')[0]).toContain(message);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(stdout).toBe('');
  });

  it('answers --json with the error as data', async () => {
    expect(await tend(['inspect', join(ROOT, 'nope.yaml'), '--json'])).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({ ok: false, error: { code: 'openapi.not_found' } });
  });
});

describe('inspect on every document of @readme/oas-examples', () => {
  const dir = join(ROOT, 'node_modules/@readme/oas-examples');
  const files = ['2.0', '3.0', '3.1'].flatMap((version) =>
    ['json', 'yaml']
      .map((format) => join(dir, version, format))
      .flatMap((d) => readdirSync(d).map((f) => join(d, f)))
      .filter((f) => statSync(f).isFile()),
  );

  it('finds the documents', () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it('reports on each one, or refuses it with a TendError that says why', async () => {
    const refused: string[] = [];
    for (const file of files) {
      let report: InspectReport | undefined;
      try {
        report = await inspectOpenApi(file);
      } catch (e) {
        // Only a clear, expected refusal is acceptable: never an internal error or a bare exception.
        expect(e, file).toBeInstanceOf(TendError);
        expect((e as TendError).code, file).not.toBe('inspect.failed');
        refused.push(`${file}: ${(e as TendError).message}`);
        continue;
      }
      expect(Array.isArray(report.types), file).toBe(true);
      expect(JSON.parse(JSON.stringify(report)), file).toEqual(report);
    }
    expect(refused).toEqual([]);
  }, 120_000);
});

describe('tend providers inspect --overlay-skeleton', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'tend-skeleton-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  /** A small document with the decisions inspect leaves open: no identity, a cursor, a parameter. */
  const DOC = join(tmp, 'api.json');
  writeFileSync(
    DOC,
    JSON.stringify({
      openapi: '3.0.3',
      info: { title: "Hostile's API\n  injected: true", version: '1' },
      paths: {
        '/admin/realms/{realm}/clients': {
          get: {
            parameters: [{ name: 'cursor', in: 'query', schema: { type: 'string' } }],
            responses: {
              '200': {
                description: 'ok',
                content: {
                  'application/json': { schema: { type: 'array', items: { type: 'object' } } },
                },
              },
            },
          },
          post: {
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
            responses: { '201': { description: 'ok' } },
          },
        },
        '/admin/realms/{realm}/clients/{id}': {
          get: {
            responses: {
              '200': {
                description: 'ok',
                content: {
                  'application/json': {
                    schema: {
                      type: 'object',
                      properties: {
                        data: {
                          type: 'object',
                          properties: { id: { type: 'string' }, name: { type: 'string' } },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
          delete: { responses: { '204': { description: 'gone' } } },
        },
        "/it's\n#odd": { get: { responses: { '200': { description: 'ok' } } } },
      },
    }),
  );

  it.each([
    ['PowerDNS', SPEC],
    ['a small document with open decisions', DOC],
  ])(
    '%s: the stub written to a file loads as a valid overlay and changes nothing',
    async (_n, spec) => {
      const file = join(tmp, `${statSync(spec).size}.overlay.yaml`);
      expect(await tend(['inspect', spec, '--overlay-skeleton', file])).toBe(0);
      expect(stdout).toContain(`Overlay stub written to ${file}`);
      const before = await inspectOpenApi(spec);
      const after = await inspectOpenApi(spec, { overlay: file });
      expect(after.warnings).toEqual([]);
      expect(after.overlay).toBe(file);
      expect({ ...after, overlay: undefined }).toEqual({ ...before, overlay: undefined });
    },
  );

  it('without a file, writes the stub alone to stdout', async () => {
    expect(await tend(['inspect', DOC, '--overlay-skeleton'])).toBe(0);
    expect(stdout).toMatch(/^# Overlay stub for Hostile's API injected: true, written by/);
    expect(stdout).toContain('overlay: 1.0.0\n');
    expect(stdout).toContain('#   parameters: { realm: <value> }');
    expect(stdout).toContain('  - target: "$.paths[\'/admin/realms/{realm}/clients\'].post"');
    expect(stdout).toContain(
      '      # the list takes a cursor parameter, but its answer has no field that looks like the next cursor; declare x-tend-pagination: {style: cursor, param: cursor, next: <field>}',
    );
    expect(stdout).toContain('      # x-tend-envelope: data # inferred (false: not wrapped)');
    expect(stdout).toContain("#   /it's #odd: GET only: read-only, nothing for Tend to manage");
    expect(stdout).not.toMatch(/^injected/m);
  });

  it('the text report shows parameters, envelopes, pagination and the operations', async () => {
    expect(await tend(['inspect', DOC])).toBe(0);
    expect(stdout).toContain(
      '  parameters   {realm} from the Provider document: parameters: {realm: <value>}',
    );
    expect(stdout).toContain('  envelope     read in data');
    expect(stdout).toContain(
      '  pagination   not followed: the list takes a cursor parameter, but its answer has no field that looks like the next cursor',
    );
    expect(stdout).toContain('  list         GET /admin/realms/{realm}/clients\n');
    expect(stdout).toContain('  update       none: every change is a replace');
  });

  it('never overwrites a file', async () => {
    const file = join(tmp, 'exists.yaml');
    writeFileSync(file, 'mine\n');
    expect(await tend(['inspect', DOC, '--overlay-skeleton', file, '--json'])).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({
      ok: false,
      error: {
        code: 'inspect.file_exists',
        message: `${file} already exists; Tend does not overwrite it with an overlay stub`,
      },
    });
    expect(readFileSync(file, 'utf8')).toBe('mine\n');
  });
});

describe('tend providers inspect --json: the shape of a type (docs/cli.md)', () => {
  it('has exactly these keys, with these types', async () => {
    expect(await tend(['inspect', SPEC, '--overlay', OVERLAY, '--json'])).toBe(0);
    const report = JSON.parse(stdout) as Record<string, unknown>;
    expect(Object.keys(report).sort()).toEqual([
      'consistentReads',
      'convertedFrom',
      'ok',
      'overlay',
      'spec',
      'title',
      'types',
      'unmapped',
      'version',
      'warnings',
    ]);
    const zones = (report['types'] as Record<string, unknown>[])[0]!;
    expect(Object.keys(zones).sort()).toEqual([...TYPE_KEYS].sort());
    expect(zones).toMatchObject({
      name: 'zones',
      identity: 'natural-key',
      identityWhy: 'natural key name: declared with x-tend-identity',
      operations: {
        list: { method: 'GET', path: '/servers/{server_id}/zones' },
        read: { method: 'GET', path: '/servers/{server_id}/zones/{zone_id}' },
        create: { method: 'POST', path: '/servers/{server_id}/zones' },
        update: { method: 'PUT', path: '/servers/{server_id}/zones/{zone_id}' },
        delete: { method: 'DELETE', path: '/servers/{server_id}/zones/{zone_id}' },
      },
      updateMode: 'partial',
      envelope: {},
      // POST …/zones?rrsets=true: the body has rrsets, so the query parameter is not a field.
      createQuery: { query: [], skipped: ['rrsets: the body has a field rrsets already'] },
      pagination: null,
      parameters: [],
    });
    const unmapped = (report['unmapped'] as Record<string, unknown>[])[0]!;
    expect(Object.keys(unmapped).sort()).toEqual(['path', 'reason']);
  });
});

describe('tend providers inspect: a secret the create sends in its query string', () => {
  const USER = {
    type: 'object',
    properties: { id: { type: 'integer', readOnly: true }, name: { type: 'string' } },
  };
  const answer = (schema: unknown) => ({
    '200': { description: 'ok', content: { 'application/json': { schema } } },
  });
  let dir: string;
  let doc: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tend-inspect-secret-'));
    doc = join(dir, 'accounts.json');
    writeFileSync(
      doc,
      JSON.stringify({
        openapi: '3.0.0',
        info: { title: 'accounts', version: '1' },
        paths: {
          '/users': {
            get: { responses: answer({ type: 'array', items: USER }) },
            post: {
              parameters: [
                { name: 'pw', in: 'query', required: true, 'x-tend-sensitive': true },
                { name: 'team', in: 'query', required: true, schema: { type: 'string' } },
              ],
              requestBody: {
                content: {
                  'application/json': {
                    schema: { type: 'object', required: ['name'], properties: { name: {} } },
                  },
                },
              },
              responses: answer(USER),
            },
          },
          '/users/{name}': {
            get: { responses: answer(USER) },
            delete: { responses: { '204': { description: 'gone' } } },
          },
        },
      }),
    );
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('text: the query fields, and a warning that the URL carries the secret', async () => {
    expect(await tend(['inspect', doc])).toBe(0);
    expect(stdout).toContain('  create query pw, team\n');
    expect(stdout).toContain(
      "  URL secret   pw is sent as the create's query parameter pw: the URL carries the secret, and the platform's access logs and proxies may keep it (Tend never prints or stores it); prefer a short-lived secret, and rotate it if those logs are shared\n",
    );
  });

  it('--json: sensitiveInQuery, beside the keys every type has', async () => {
    expect(await tend(['inspect', doc, '--json'])).toBe(0);
    const users = (JSON.parse(stdout) as InspectReport).types.find((t) => t.name === 'users')!;
    expect(users.sensitive).toEqual(['pw']);
    expect(users.sensitiveInQuery).toEqual([{ param: 'pw', field: 'pw' }]);
    expect(Object.keys(users).sort()).toEqual([...TYPE_KEYS, 'sensitiveInQuery'].sort());
  });
});
