import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Diagnostic, ProviderDescription, ResourceTypeInfo } from '../core/index.js';
import { loadIntent } from './index.js';

// Where secret references may stand and what they may read (docs/intent.md, "Secrets").

const accounts: ResourceTypeInfo = {
  name: 'accounts',
  schema: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      tags: { type: 'object', additionalProperties: { type: 'string' } },
      password: { type: 'string', format: 'password', writeOnly: true },
      bootstrap: { type: 'string', writeOnly: true },
      pin: { type: 'string', format: 'password' },
      api_key: { type: 'string', minLength: 40 },
      settings: { type: 'object', properties: { token: { type: 'string' } } },
      size: { type: 'integer' },
    },
    required: ['name'],
  },
  identity: 'marker',
  idField: 'id',
  createOnly: [],
  outputOnly: [],
  sensitive: ['password'],
  writeOnly: ['bootstrap'],
  lifecycle: 'annotations',
  idempotencyKey: false,
};

/** A type whose create takes `code` and `label` in its URL's query string (create-query.ts). */
const invites: ResourceTypeInfo = {
  name: 'invites',
  schema: {
    type: 'object',
    properties: {
      email: { type: 'string' },
      code: { type: 'string', writeOnly: true },
      label: { type: 'string' },
      password: { type: 'string', format: 'password', writeOnly: true },
    },
  },
  identity: 'marker',
  idField: 'id',
  createOnly: [],
  outputOnly: [],
  sensitive: ['code', 'password'],
  sentInUrl: ['code', 'label'],
  lifecycle: 'annotations',
  idempotencyKey: false,
};

const DESCRIPTION: ProviderDescription = {
  auditFeed: false,
  warnings: [],
  types: [accounts, invites],
};

/** An invites Resource document whose spec lines start at line 5 (`spec:` is line 4). */
const invite = (...specLines: string[]) =>
  yaml('kind: Resource', 'type: sb.invites', 'name: i', 'spec:', ...specLines);

const yaml = (...lines: string[]) => lines.join('\n') + '\n';

const provider = (...extra: string[]) =>
  yaml(
    'kind: Provider',
    'name: sb',
    'type: openapi',
    'spec: ./sandbox.json',
    'endpoint: http://127.0.0.1:9/',
    ...extra,
  );

/** A Resource document whose spec lines start at line 5 (`spec:` is line 4). */
const account = (...specLines: string[]) =>
  yaml('kind: Resource', 'type: sb.accounts', 'name: a', 'spec:', '  name: a', ...specLines);

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function tempDir(prefix: string): Promise<string> {
  // Real paths, so that messages naming where a link leads compare equal.
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  dirs.push(dir);
  return dir;
}

/** A directory outside every intent directory, holding `token.txt`. */
const outside = (async () => {
  const dir = await tempDir('tend-outside-');
  await writeFile(join(dir, 'token.txt'), 'outside-secret\n');
  return dir;
})();

interface Setup {
  files: Record<string, string>;
  env?: Record<string, string>;
  /** Runs in the fresh intent directory before loading. */
  prepare?: (dir: string, outside: string) => Promise<void>;
}

async function load(setup: Setup): Promise<{ dir: string; diagnostics: Diagnostic[] }> {
  const dir = await tempDir('tend-secrets-');
  await writeFile(join(dir, 'sandbox.json'), '{}');
  await mkdir(join(dir, 'secrets'));
  await writeFile(join(dir, 'secrets', 'pw'), 'inside-secret\n');
  for (const [name, text] of Object.entries({ 'providers.yaml': provider(), ...setup.files })) {
    await writeFile(join(dir, name), text);
  }
  await setup.prepare?.(dir, await outside);
  const { diagnostics } = await loadIntent(dir, {
    describe: () => Promise.resolve(DESCRIPTION),
    ...(setup.env && { env: setup.env }),
  });
  return { dir, diagnostics };
}

interface Expected {
  code: string;
  file?: string;
  line: number;
  column: number;
  path?: string;
  severity?: 'error' | 'warning';
  message: string[];
  hint?: string[];
}

interface Case extends Setup {
  name: string;
  reason: string;
  expected: Expected[];
}

const cases: Case[] = [
  {
    name: 'a secret the create sends in its URL',
    reason:
      'allowed (the platform takes it nowhere else), but access logs keep URLs: said, not refused',
    files: { 'main.yaml': invite('  email: a@example.org', '  code: { fromEnv: INVITE_CODE }') },
    expected: [
      {
        code: 'secret.in_url',
        line: 6,
        column: 9,
        path: 'spec.code',
        severity: 'warning',
        message: [
          "`spec.code` is a secret, and invites objects are created with it in the URL's query string",
          'access logs',
        ],
        hint: ['rotate it after the create', 'tend providers inspect'],
      },
    ],
  },
  {
    name: 'a field the create sends in its URL, listed in secrets',
    reason: 'a field the resource makes a secret travels in the URL just the same',
    files: {
      'main.yaml': invite('  label: { fromFile: secrets/pw }', 'secrets: [label]'),
    },
    expected: [
      {
        code: 'secret.in_url',
        line: 5,
        column: 10,
        path: 'spec.label',
        severity: 'warning',
        message: ['`spec.label` is a secret'],
      },
    ],
  },
  {
    name: 'a secret the create sends in its body',
    reason: 'no URL, nothing to say',
    files: { 'main.yaml': invite('  password: { fromEnv: PW }') },
    expected: [],
  },
  {
    name: 'fromFile in a tag map',
    reason:
      'a tag is no secret field: a pull request must not send a file to the platform as a tag',
    files: { 'main.yaml': account('  tags: { fromFile: /etc/hostname }') },
    expected: [
      {
        code: 'secret.not_allowed',
        line: 6,
        column: 11,
        path: 'spec.tags.fromFile',
        message: [
          '`spec.tags` is not a secret field of accounts',
          'read only into a field the provider marks sensitive, write-only or password, or one listed in `secrets:`',
        ],
        hint: ['x-tend-sensitive: true', 'add `secrets: [tags]` to this Resource document'],
      },
    ],
  },
  {
    name: 'fromEnv in a plain text field',
    reason: 'an environment variable is a secret source like a file; no schema error on top',
    files: { 'main.yaml': account('  api_key: { fromEnv: AWS_SECRET_ACCESS_KEY }') },
    expected: [
      {
        code: 'secret.not_allowed',
        line: 6,
        column: 14,
        path: 'spec.api_key.fromEnv',
        message: ['`spec.api_key` is not a secret field of accounts: { fromEnv }'],
        hint: ['secrets: [api_key]'],
      },
    ],
  },
  {
    name: 'a reference below the top level',
    reason: 'references are read only into top-level fields; a nested one would be sent as is',
    files: {
      'main.yaml': account('  settings:', '    token: { fromFile: secrets/pw }'),
    },
    expected: [
      {
        code: 'secret.not_allowed',
        line: 7,
        column: 14,
        path: 'spec.settings.token.fromFile',
        message: ['`spec.settings.token` is inside `spec.settings`: { fromFile } is read only'],
        hint: ['write the value itself'],
      },
    ],
  },
  {
    name: 'a value in a field listed in secrets',
    reason: 'a listed field is a secret: its value must not be written, nor printed',
    files: { 'main.yaml': account('  api_key: hunter2-plain', 'secrets: [api_key]') },
    expected: [
      {
        code: 'secret.inline',
        line: 6,
        column: 12,
        path: 'spec.api_key',
        message: ['`spec.api_key` is a secret and must not be written in the intent'],
      },
    ],
  },
  {
    name: 'secrets names a field the type does not have',
    reason: 'a misspelt entry would otherwise accept nothing and explain nothing',
    files: { 'main.yaml': account('secrets: [api_kee]') },
    expected: [
      {
        code: 'secret.unknown_field',
        line: 6,
        column: 11,
        path: 'secrets[0]',
        message: [
          '`secrets` names `api_kee`, which is not a field of accounts',
          'its fields: api_key, bootstrap, name',
          'Did you mean `api_key`?',
        ],
      },
    ],
  },
  {
    name: 'secrets names a field that is not text',
    reason: 'a secret is read as text: an integer or a mapping field cannot take one',
    files: { 'main.yaml': account('  tags: { fromFile: secrets/pw }', 'secrets: [tags, size]') },
    expected: [
      {
        code: 'secret.not_text',
        line: 7,
        column: 11,
        path: 'secrets[0]',
        message: ['`secrets` names `tags`, a field of type object: a secret is read as text'],
      },
      {
        code: 'secret.not_text',
        line: 7,
        column: 17,
        path: 'secrets[1]',
        message: ['`size`, a field of type integer'],
      },
    ],
  },
  {
    name: 'secrets that is not a list of names',
    reason: 'the shape of `secrets` is checked like any structural field',
    files: {
      'main.yaml':
        account('secrets: api_key') +
        '---\n' +
        account('secrets: [3]').replace('name: a', 'name: b'),
    },
    expected: [
      {
        code: 'field.type',
        line: 6,
        column: 10,
        path: 'secrets',
        message: ['`secrets` must be a list of spec field names, got string'],
      },
      {
        code: 'field.type',
        line: 13,
        column: 11,
        path: 'secrets[0]',
        message: ['`secrets[0]` must be the name of a spec field, got integer'],
      },
    ],
  },
  {
    name: 'fromFile with an absolute path outside the intent directory',
    reason: 'a secret file is read only from the intent directory (or TEND_SECRET_DIRS)',
    files: { 'main.yaml': account('  password: { fromFile: /etc/hostname }') },
    expected: [
      {
        code: 'secret.outside',
        line: 6,
        column: 25,
        path: 'spec.password.fromFile',
        message: ['`spec.password.fromFile` names /etc/hostname: outside the intent directory'],
        hint: ['TEND_SECRET_DIRS', `TEND_SECRET_DIRS=/one/dir${delimiter}/another/dir`],
      },
    ],
  },
  {
    name: 'fromFile escaping with ..',
    reason:
      'relative paths are resolved before they are judged; a missing file outside is still outside',
    files: { 'main.yaml': account('  password: { fromFile: ../../../etc/nothing-here }') },
    expected: [
      {
        code: 'secret.outside',
        line: 6,
        column: 25,
        path: 'spec.password.fromFile',
        message: ['names ../../../etc/nothing-here: outside the intent directory'],
      },
    ],
  },
  {
    name: 'fromFile through a symbolic link leading outside',
    reason: 'links are followed before judging: a link inside the directory is no way out',
    files: { 'main.yaml': account('  password: { fromFile: secrets/link }') },
    prepare: (dir, out) => symlink(join(out, 'token.txt'), join(dir, 'secrets', 'link')),
    expected: [
      {
        code: 'secret.outside',
        line: 6,
        column: 25,
        path: 'spec.password.fromFile',
        message: ['names secrets/link, which leads to ', 'token.txt: outside the intent directory'],
      },
    ],
  },
  {
    name: 'fromFile naming a directory',
    reason: 'only a regular file holds a secret',
    files: { 'main.yaml': account('  password: { fromFile: secrets }') },
    expected: [
      {
        code: 'secret.not_file',
        line: 6,
        column: 25,
        path: 'spec.password.fromFile',
        message: ['names secrets, which is a directory: a secret file must be a regular file'],
      },
    ],
  },
  {
    name: 'fromFile naming a FIFO',
    reason: 'a FIFO would block the reader forever: refused at validation, never opened',
    files: { 'main.yaml': account('  password: { fromFile: secrets/fifo }') },
    prepare: (dir) => {
      execFileSync('mkfifo', [join(dir, 'secrets', 'fifo')]);
      return Promise.resolve();
    },
    expected: [
      {
        code: 'secret.not_file',
        line: 6,
        column: 25,
        path: 'spec.password.fromFile',
        message: ['names secrets/fifo, which is a FIFO (named pipe)'],
      },
    ],
  },
  {
    name: 'fromFile naming a missing file inside',
    reason: 'like an unset variable: a warning, the file may be created before apply',
    files: { 'main.yaml': account('  password: { fromFile: secrets/later }') },
    expected: [
      {
        code: 'secret.unavailable',
        severity: 'warning',
        line: 6,
        column: 25,
        path: 'spec.password.fromFile',
        message: ['secret file secrets/later does not exist'],
      },
    ],
  },
  {
    name: 'provider auth fromFile outside the intent directory',
    reason: 'the credential follows the same rule as any secret file',
    files: { 'providers.yaml': provider('auth: { header: X-API-Key, fromFile: /etc/hostname }') },
    expected: [
      {
        code: 'secret.outside',
        file: 'providers.yaml',
        line: 6,
        column: 38,
        path: 'auth.fromFile',
        message: ['`auth.fromFile` names /etc/hostname: outside the intent directory'],
      },
    ],
  },
  {
    name: 'fromFile outside both the intent directory and TEND_SECRET_DIRS',
    reason: 'the message says which directories were trusted',
    env: { TEND_SECRET_DIRS: '/nonexistent-dir-for-tend' + delimiter + 'relative/dir' },
    files: { 'main.yaml': account('  password: { fromFile: /etc/hostname }') },
    expected: [
      {
        code: 'env.ignored',
        severity: 'warning',
        line: 0,
        column: 0,
        message: ['TEND_SECRET_DIRS entry /nonexistent-dir-for-tend does not exist: ignored'],
      },
      {
        code: 'env.ignored',
        severity: 'warning',
        line: 0,
        column: 0,
        message: ['TEND_SECRET_DIRS entry "relative/dir" is not an absolute path: ignored'],
      },
      {
        code: 'secret.outside',
        line: 6,
        column: 25,
        path: 'spec.password.fromFile',
        message: ['outside the intent directory'],
      },
    ],
  },
  {
    name: 'provider spec outside the intent directory',
    reason: 'intent must not make Tend parse (and quote) any file on the machine',
    files: { 'providers.yaml': provider().replace('./sandbox.json', '/etc/hostname') },
    expected: [
      {
        code: 'file.outside',
        file: 'providers.yaml',
        line: 4,
        column: 7,
        path: 'spec',
        message: ['`spec` file /etc/hostname is outside the intent directory'],
        hint: ['use an http(s) URL', 'TEND_SPEC_DIRS'],
      },
    ],
  },
  {
    name: 'provider spec that is a directory',
    reason: 'only a regular file is a document',
    files: { 'providers.yaml': provider().replace('./sandbox.json', './secrets') },
    expected: [
      {
        code: 'file.not_file',
        file: 'providers.yaml',
        line: 4,
        column: 7,
        path: 'spec',
        message: ['`spec` ./secrets is a directory, not a file'],
      },
    ],
  },
  {
    name: 'provider overlay through a link leading outside',
    reason: 'a link inside the directory does not make an outside file part of the intent',
    files: { 'providers.yaml': provider('overlay: ./overlay.link') },
    prepare: (dir, out) => symlink(join(out, 'token.txt'), join(dir, 'overlay.link')),
    expected: [
      {
        code: 'file.outside',
        file: 'providers.yaml',
        line: 6,
        column: 10,
        path: 'overlay',
        message: [
          '`overlay` file ./overlay.link, which leads to ',
          'is outside the intent directory',
        ],
      },
    ],
  },
];

describe('secret references are confined', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const { dir, diagnostics } = await load(c);
      const got = diagnostics.map((d) => ({
        code: d.code,
        file: d.file,
        line: d.line ?? 0,
        column: d.column ?? 0,
        path: d.path,
      }));
      const want = c.expected.map((e) => ({
        code: e.code,
        file: e.line === 0 ? undefined : join(dir, e.file ?? 'main.yaml'),
        line: e.line,
        column: e.column,
        path: e.path,
      }));
      expect(got, c.reason).toEqual(want);
      c.expected.forEach((e, i) => {
        const d = diagnostics[i]!;
        expect(d.severity).toBe(e.severity ?? 'error');
        for (const text of e.message) expect(d.message).toContain(text);
        for (const text of e.hint ?? []) expect(d.hint).toContain(text);
        expect(d.message + (d.hint ?? '')).not.toContain('hunter2');
      });
    });
  }
});

describe('secret references that are accepted', () => {
  it('in sensitive, write-only, password and listed fields, from files inside the directory', async () => {
    const { diagnostics } = await load({
      files: {
        'main.yaml': account(
          '  password: { fromFile: secrets/pw }',
          '  bootstrap: { fromEnv: BOOT }',
          '  pin: { fromFile: secrets/link }',
          '  api_key: { fromEnv: KEY }',
          'secrets: [api_key]',
        ),
      },
      env: { BOOT: 'b', KEY: 'k' },
      // A link is fine when it leads to a file inside the directory.
      prepare: (dir) => symlink(join(dir, 'secrets', 'pw'), join(dir, 'secrets', 'link')),
    });
    // No schema error either: `api_key` has minLength 40, which a reference is not judged by.
    expect(diagnostics).toEqual([]);
  });

  it('from a file in a directory named in TEND_SECRET_DIRS, for resources and provider auth', async () => {
    const out = await outside;
    const { diagnostics } = await load({
      env: { TEND_SECRET_DIRS: `/nonexistent-x${delimiter}${out}` },
      files: {
        'providers.yaml': provider(
          `auth: { header: X-API-Key, fromFile: ${join(out, 'token.txt')} }`,
        ),
        'main.yaml': account(`  password: { fromFile: ${join(out, 'token.txt')} }`),
      },
    });
    expect(diagnostics.filter((d) => d.code !== 'env.ignored')).toEqual([]);
  });

  it('a spec from a directory named in TEND_SPEC_DIRS', async () => {
    const out = await outside;
    const { diagnostics } = await load({
      env: { TEND_SPEC_DIRS: out },
      files: { 'providers.yaml': provider().replace('./sandbox.json', join(out, 'token.txt')) },
    });
    expect(diagnostics).toEqual([]);
  });
});
