import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeProvider, zoneDirs } from '../../test/support/zone-checks.js';
import { loadIntent } from './index.js';

// The `tls` check as written in intent: what it reads, its defaults, and every bad input refused
// at its place with a message that says what to write instead. The `ca` file is confined like every
// file intent names: the intent directory, or TEND_SECRET_DIRS.

const zoneWithChecks = zoneDirs('tend-tls-check-');
const outside: string[] = [];
afterAll(async () => {
  await Promise.all(outside.map((d) => rm(d, { recursive: true, force: true })));
});

async function withCa(...lines: string[]): Promise<string> {
  const dir = await zoneWithChecks(...lines);
  await writeFile(join(dir, 'ca.pem'), '-----BEGIN CERTIFICATE-----\n');
  await mkdir(join(dir, 'certs'));
  return dir;
}

describe('tls check in intent', () => {
  it('reads every field, with defaults for port (443), minDaysLeft (14) and timeoutMs (5000)', async () => {
    const dir = await withCa(
      '  - tls: { host: db.example.org }',
      '  - name: pg',
      '    tls:',
      '      host: "${pdns.zones/example.name}"',
      '      port: 5432',
      '      servername: db.example',
      '      ca: ca.pem',
      '      minDaysLeft: 0',
      '      timeoutMs: 500',
      '  - tls: { host: "::1", port: 8443, minDaysLeft: 30 }',
    );
    const { intent, diagnostics } = await loadIntent(dir, { describe: describeProvider });
    expect(diagnostics).toEqual([]);
    const file = join(dir, 'main.yaml');
    expect(intent!.resources[0]!.checks).toEqual([
      {
        kind: 'tls',
        name: 'tls-0',
        host: 'db.example.org',
        port: 443,
        minDaysLeft: 14,
        timeoutMs: 5000,
        source: { file, line: 6, column: 5 },
      },
      {
        kind: 'tls',
        name: 'pg',
        host: '${pdns.zones/example.name}',
        port: 5432,
        servername: 'db.example',
        ca: join(dir, 'ca.pem'),
        minDaysLeft: 0,
        timeoutMs: 500,
        source: { file, line: 7, column: 5 },
      },
      {
        kind: 'tls',
        name: 'tls-2',
        host: '::1',
        port: 8443,
        minDaysLeft: 30,
        timeoutMs: 5000,
        source: { file, line: 15, column: 5 },
      },
    ]);
  });

  const bad: {
    name: string;
    line: string;
    /** `at`: the text the diagnostic points at (its first occurrence in `line`). */
    want: { code: string; path: string; at: string; message: string; hint?: string }[];
  }[] = [
    {
      name: 'not a mapping',
      line: '  - tls: db.example.org',
      want: [
        {
          code: 'field.type',
          path: 'checks[0].tls',
          at: 'db.example.org',
          message: 'a tls check must be a mapping with `host`, got string',
          hint: 'e.g. - tls: { host: db.example.org, port: 5432, minDaysLeft: 30 }',
        },
      ],
    },
    {
      name: 'a missing host',
      line: '  - tls: { port: 443 }',
      want: [
        {
          code: 'field.required',
          path: 'checks[0].tls.host',
          at: 'tls',
          message: 'missing required field `checks[0].tls.host`',
        },
      ],
    },
    {
      name: 'a host that is a URL',
      line: '  - tls: { host: "https://db.example.org" }',
      want: [
        {
          code: 'field.invalid',
          path: 'checks[0].tls.host',
          at: '"https',
          message: '`host` must be a host name or an IP address, got "https://db.example.org"',
          hint: 'no scheme, path or port: e.g. host: db.example.org, port: 5432',
        },
      ],
    },
    {
      name: 'a servername with a port',
      line: '  - tls: { host: 127.0.0.1, servername: "db.example:443" }',
      want: [
        {
          code: 'field.invalid',
          path: 'checks[0].tls.servername',
          at: '"db.example:443"',
          message: '`servername` must be a host name or an IP address, got "db.example:443"',
        },
      ],
    },
    {
      name: 'a port out of range',
      line: '  - tls: { host: db.example.org, port: 70000 }',
      want: [
        {
          code: 'field.invalid',
          path: 'checks[0].tls.port',
          at: '70000',
          message: '`port` must be a port number (1-65535), got integer 70000',
        },
      ],
    },
    {
      name: 'a port that is not a number',
      line: '  - tls: { host: db.example.org, port: https }',
      want: [
        {
          code: 'field.invalid',
          path: 'checks[0].tls.port',
          at: 'https',
          message: '`port` must be a port number (1-65535), got string "https"',
        },
      ],
    },
    {
      name: 'a negative minDaysLeft',
      line: '  - tls: { host: db.example.org, minDaysLeft: -1 }',
      want: [
        {
          code: 'field.type',
          path: 'checks[0].tls.minDaysLeft',
          at: '-1',
          message: '`checks[0].tls.minDaysLeft` must be an integer >= 0, got integer -1',
        },
      ],
    },
    {
      name: 'a fractional minDaysLeft',
      line: '  - tls: { host: db.example.org, minDaysLeft: 1.5 }',
      want: [
        {
          code: 'field.type',
          path: 'checks[0].tls.minDaysLeft',
          at: '1.5',
          message: '`checks[0].tls.minDaysLeft` must be an integer >= 0, got number 1.5',
        },
      ],
    },
    {
      name: 'a zero timeoutMs',
      line: '  - tls: { host: db.example.org, timeoutMs: 0 }',
      want: [
        {
          code: 'field.type',
          path: 'checks[0].tls.timeoutMs',
          at: '0 }',
          message: '`checks[0].tls.timeoutMs` must be an integer >= 1, got integer 0',
        },
      ],
    },
    {
      name: 'an unknown field',
      line: '  - tls: { host: db.example.org, minDays: 30 }',
      want: [
        {
          code: 'field.unknown',
          path: 'checks[0].tls.minDays',
          at: 'minDays',
          message: expect.stringContaining('`minDays`'),
        },
      ],
    },
    {
      name: 'a missing ca file',
      line: '  - tls: { host: db.example.org, ca: nope.pem }',
      want: [
        {
          code: 'file.not_found',
          path: 'checks[0].tls.ca',
          at: 'nope.pem',
          message: expect.stringMatching(
            /^`ca` file nope\.pem does not exist \(looked at \/.*\/nope\.pem\)$/,
          ),
          hint: 'the path is relative to the intent directory',
        },
      ],
    },
    {
      name: 'a ca outside the intent directory',
      line: '  - tls: { host: db.example.org, ca: /etc/hostname }',
      want: [
        {
          code: 'file.outside',
          path: 'checks[0].tls.ca',
          at: '/etc/hostname',
          message: '`ca` file /etc/hostname is outside the intent directory',
          hint: 'copy it into the intent directory, or name its directory in TEND_SECRET_DIRS (TEND_SECRET_DIRS=/one/dir:/another/dir)',
        },
      ],
    },
    {
      name: 'a ca reached by going up',
      line: '  - tls: { host: db.example.org, ca: ../ca.pem }',
      want: [
        {
          code: 'file.outside',
          path: 'checks[0].tls.ca',
          at: '../ca.pem',
          message: '`ca` file ../ca.pem is outside the intent directory',
        },
      ],
    },
    {
      name: 'a ca that is a directory',
      line: '  - tls: { host: db.example.org, ca: certs }',
      want: [
        {
          code: 'file.not_file',
          path: 'checks[0].tls.ca',
          at: 'certs',
          message: '`ca` certs is a directory, not a file',
        },
      ],
    },
  ];

  it.each(bad)('refuses $name, at its line and column', async (c) => {
    const dir = await withCa(c.line);
    const { intent, diagnostics } = await loadIntent(dir, { describe: describeProvider });
    expect(intent).toBeUndefined();
    expect(
      diagnostics.map((d) => ({
        code: d.code,
        path: d.path,
        line: d.line,
        column: d.column,
        message: d.message,
      })),
    ).toEqual(
      c.want.map(({ hint: _, at, ...w }) => ({ ...w, line: 6, column: c.line.indexOf(at) + 1 })),
    );
    c.want.forEach((w, i) => {
      if (w.hint !== undefined) expect(diagnostics[i]!.hint).toBe(w.hint);
    });
  });

  it('refuses a ca that is a link leading out of the intent directory', async () => {
    const dir = await withCa('  - tls: { host: db.example.org, ca: link.pem }');
    await symlink('/etc/hostname', join(dir, 'link.pem'));
    const { diagnostics } = await loadIntent(dir, { describe: describeProvider });
    expect(diagnostics.map((d) => [d.code, d.message])).toEqual([
      ['file.outside', '`ca` file link.pem is outside the intent directory'],
    ]);
  });

  it('reads a ca from a directory named in TEND_SECRET_DIRS', async () => {
    const other = await mkdtemp(join(tmpdir(), 'tend-tls-ca-'));
    outside.push(other);
    await writeFile(join(other, 'ca.pem'), '-----BEGIN CERTIFICATE-----\n');
    const dir = await withCa(`  - tls: { host: db.example.org, ca: ${join(other, 'ca.pem')} }`);
    const env = { TEND_SECRET_DIRS: other };
    const { intent, diagnostics } = await loadIntent(dir, { describe: describeProvider, env });
    expect(diagnostics).toEqual([]);
    expect(intent!.resources[0]!.checks[0]).toMatchObject({ ca: join(other, 'ca.pem') });
  });

  it('checks that references in a tls check name a declared resource', async () => {
    const dir = await withCa('  - tls: { host: "${pdns.zones/nope.name}" }');
    const { diagnostics } = await loadIntent(dir, { describe: describeProvider });
    expect(diagnostics.map((d) => [d.code, d.path])).toEqual([
      ['ref.dangling', 'checks[0].tls.host'],
    ]);
  });
});
