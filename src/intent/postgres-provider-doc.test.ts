import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { PostgresProviderDecl, ProviderDescription } from '../core/index.js';
import { loadIntent } from './index.js';

// `type: postgres` Provider documents: the connection only from a secret reference (or the libpq
// variables), TLS and timeouts checked, every problem at its file:line:column.

const DESCRIPTION: ProviderDescription = { auditFeed: false, warnings: [], types: [] };

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function write(...lines: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tend-pgdoc-'));
  dirs.push(dir);
  await writeFile(join(dir, 'db.url'), 'postgres://u:p@127.0.0.1/db\n');
  await writeFile(
    join(dir, 'providers.yaml'),
    ['kind: Provider', 'name: pg', 'type: postgres', ...lines, ''].join('\n'),
  );
  return dir;
}

const load = (dir: string, env?: Record<string, string>) =>
  loadIntent(dir, { describe: () => Promise.resolve(DESCRIPTION), ...(env ? { env } : {}) });

describe('type: postgres Provider documents', () => {
  it('reads the libpq defaults when nothing else is said', async () => {
    const dir = await write();
    const { intent, diagnostics } = await load(dir);
    expect(diagnostics).toEqual([]);
    expect(intent?.providers[0]).toEqual({
      kind: 'Provider',
      name: 'pg',
      type: 'postgres',
      statementTimeoutMs: 30_000,
      lockTimeoutMs: 5_000,
      connectTimeoutMs: 10_000,
      source: { file: join(dir, 'providers.yaml'), line: 1, column: 1 },
    });
  });

  it('reads a connection from a file, TLS, timeouts and the working database', async () => {
    const dir = await write(
      'connection: { fromFile: db.url }',
      'sslMode: verify-full',
      'statementTimeoutMs: 1000',
      'lockTimeoutMs: 200',
      'database: app',
    );
    const { intent, diagnostics } = await load(dir);
    expect(diagnostics).toEqual([]);
    expect(intent?.providers[0]).toMatchObject({
      connection: { fromFile: join(dir, 'db.url') },
      sslMode: 'verify-full',
      statementTimeoutMs: 1000,
      lockTimeoutMs: 200,
      database: 'app',
    } satisfies Partial<PostgresProviderDecl>);
  });

  it('warns when the connection variable is not set', async () => {
    const { diagnostics } = await load(await write('connection: { fromEnv: DATABASE_URL }'), {});
    expect(diagnostics.map((d) => [d.severity, d.code, d.message])).toEqual([
      ['warning', 'secret.unavailable', 'environment variable DATABASE_URL is not set'],
    ]);
  });

  const bad: [string, string[], [string, string, number, number], string][] = [
    [
      'a connection string written inline',
      ['connection: postgres://u:secret@h/db'],
      ['secret.inline', 'connection', 4, 13],
      '`connection` would put a connection string (and its password) in the intent; it is read from the environment or a file',
    ],
    [
      'a connection reference naming neither source',
      ['connection: {}'],
      ['field.required', 'connection', 4, 1],
      '`connection` needs `fromEnv` or `fromFile`: where to read the postgres:// URL',
    ],
    [
      'both sources',
      ['connection: { fromEnv: A, fromFile: db.url }'],
      ['field.invalid', 'connection', 4, 13],
      '`connection` takes either `fromEnv` or `fromFile`, not both',
    ],
    [
      'an unknown TLS mode',
      ['sslMode: verify-ful'],
      ['field.invalid', 'sslMode', 4, 10],
      'unknown `sslMode` `verify-ful`; known modes: disable, require, verify-ca, verify-full. Did you mean `verify-full`?',
    ],
    [
      'a timeout that is not a whole number of milliseconds',
      ['lockTimeoutMs: 0.5'],
      ['field.type', 'lockTimeoutMs', 4, 16],
      '`lockTimeoutMs` must be an integer >= 1, got number 0.5',
    ],
    [
      'a field of the openapi type',
      ['endpoint: http://x'],
      ['field.unknown', 'endpoint', 4, 1],
      'unknown field `endpoint` in a `type: postgres` Provider document; allowed fields: kind, name, type, connection, sslMode, sslRootCert, statementTimeoutMs, lockTimeoutMs, connectTimeoutMs, database.',
    ],
    [
      'a root certificate that does not exist',
      ['sslRootCert: ca.pem'],
      ['file.not_found', 'sslRootCert', 4, 14],
      '`sslRootCert` file ca.pem does not exist',
    ],
  ];
  it.each(bad)('refuses %s, at its position', async (_what, lines, where, message) => {
    const { intent, diagnostics } = await load(await write(...lines));
    expect(intent).toBeUndefined();
    expect(diagnostics.map((d) => [d.code, d.path, d.line, d.column])).toEqual([where]);
    expect(diagnostics[0]!.message.startsWith(message)).toBe(true);
  });
});
