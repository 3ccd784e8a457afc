import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TendError } from '../../core/index.js';
import type { InspectReport } from '../../providers/index.js';
import { inspectOpenApi } from '../../providers/index.js';
import { registerProvidersCommand } from './providers.js';

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
    expect(stdout).toContain('4 resource types, 14 paths not managed, 0 warnings');
    expect(stdout).toMatch(
      /zones {2}\/servers\/\{server_id\}\/zones\n {2}identity {5}none: no natural key/,
    );
    expect(stdout).toContain(
      '  parameters   {server_id} from the Provider document: parameters: {server_id: <value>}',
    );
    expect(stderr).toBe('');
  });

  it('with the overlay: zones, rrsets, TSIG keys, metadata and cryptokeys', async () => {
    expect(await tend(['inspect', SPEC, '--overlay', OVERLAY, '--json'])).toBe(0);
    const report = JSON.parse(stdout) as InspectReport & { ok: boolean };
    expect(report.ok).toBe(true);
    expect(report.warnings).toEqual([]);
    const byName = Object.fromEntries(report.types.map((t) => [t.name, t]));
    expect(Object.keys(byName)).toEqual(['zones', 'rrsets', 'tsigkeys', 'metadata', 'cryptokeys']);
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
      createOnly: [],
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
  });

  it('prints each type with what it needs in text', async () => {
    expect(await tend(['inspect', SPEC, '--overlay', OVERLAY])).toBe(0);
    expect(stdout).toContain('5 resource types, 14 paths not managed, 0 warnings');
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
