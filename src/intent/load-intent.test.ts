import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type {
  Diagnostic,
  ProviderDecl,
  ProviderDescription,
  ResourceTypeInfo,
} from '../core/index.js';
import { loadIntent } from './index.js';

// A hand-written description mimicking the sandbox platform (see docs/intent.md for the model).
function type(
  name: string,
  schema: Record<string, unknown>,
  extra: Partial<ResourceTypeInfo> = {},
): ResourceTypeInfo {
  return {
    name,
    schema,
    identity: 'marker',
    idField: 'id',
    createOnly: [],
    outputOnly: [],
    sensitive: [],
    lifecycle: 'platform',
    idempotencyKey: true,
    ...extra,
  };
}

const tags = { type: 'object', additionalProperties: { type: 'string' } };

const SANDBOX: ProviderDescription = {
  auditFeed: true,
  warnings: [],
  types: [
    type(
      'networks',
      {
        type: 'object',
        properties: { name: { type: 'string' }, cidr: { type: 'string' }, tags },
        required: ['name', 'cidr'],
      },
      { createOnly: ['cidr'], outputOnly: ['status', 'created_at'] },
    ),
    type(
      'instances',
      {
        type: 'object',
        properties: {
          name: { type: 'string' },
          network_id: { type: 'string', pattern: '^net-' },
          size: { type: 'string', enum: ['small', 'medium', 'large'] },
          image: { type: 'string' },
          admin_password: { type: 'string', format: 'password' },
          tags,
        },
        required: ['name', 'network_id', 'image'],
      },
      {
        createOnly: ['image'],
        outputOnly: ['status', 'private_ip'],
        sensitive: ['admin_password'],
      },
    ),
    type('volumes', {
      type: 'object',
      properties: {
        name: { type: 'string' },
        instance_id: { type: 'string' },
        size: { type: 'integer', minimum: 1 },
      },
      required: ['name', 'instance_id', 'size'],
    }),
  ],
};

/** A fake `describe`: the sandbox description for every provider, and a record of the calls. */
function fakeDescribe(result: ProviderDescription | Diagnostic = SANDBOX) {
  const calls: ProviderDecl[] = [];
  const describe = (decl: ProviderDecl) => {
    calls.push(decl);
    return Promise.resolve(result);
  };
  return { describe, calls };
}

const PROVIDER = [
  'kind: Provider',
  'name: sb',
  'type: openapi',
  'spec: ./sandbox.json',
  'endpoint: http://127.0.0.1:9/',
].join('\n');

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** Writes an intent directory: the given files, plus `sandbox.json` for Provider specs to point at. */
async function fixture(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tend-intent-'));
  dirs.push(dir);
  await writeFile(join(dir, 'sandbox.json'), '{}');
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

/** Lines joined into a YAML text, so that a case's line numbers are its array indices + 1. */
const yaml = (...lines: string[]) => lines.join('\n') + '\n';

interface Expected {
  code: string;
  /** File name inside the fixture directory. */
  file?: string;
  line: number;
  column: number;
  path?: string;
  messageIncludes: string[];
  messageExcludes?: string[];
  hintIncludes?: string;
  severity?: 'error' | 'warning';
}

interface Case {
  name: string;
  reason: string;
  /** Files besides `providers.yaml` (which holds PROVIDER unless the case sets its own). */
  files: Record<string, string>;
  expected: Expected[];
}

const cases: Case[] = [
  {
    name: 'yaml syntax error',
    reason: 'the YAML parser position is reported, and the broken document is not checked further',
    files: { 'main.yaml': yaml('kind: Resource', 'type: sb.networks: x', 'name: Main') },
    expected: [
      {
        code: 'yaml.syntax',
        line: 2,
        column: 7,
        messageIncludes: ['YAML syntax error: Nested mappings are not allowed in compact mappings'],
        hintIncludes: 'fix the YAML syntax',
      },
    ],
  },
  {
    name: 'duplicate YAML key',
    reason: 'a key written twice is ambiguous: the parser refuses it',
    files: { 'main.yaml': yaml('kind: Resource', 'type: sb.networks', 'type: sb.volumes') },
    expected: [
      {
        code: 'yaml.syntax',
        line: 3,
        column: 1,
        messageIncludes: ['Map keys must be unique'],
      },
    ],
  },
  {
    name: 'kind missing',
    reason: 'without kind the document cannot be read; point at its start',
    files: { 'main.yaml': yaml('---', 'name: main', 'type: sb.networks') },
    expected: [
      {
        code: 'kind.missing',
        line: 2,
        column: 1,
        messageIncludes: ['no `kind`', 'known kinds: Provider, Resource'],
      },
    ],
  },
  {
    name: 'kind unknown',
    reason: 'an unknown kind lists the known ones and suggests the closest',
    files: { 'main.yaml': yaml('kind: Resorce', 'name: main') },
    expected: [
      {
        code: 'kind.unknown',
        line: 1,
        column: 7,
        path: 'kind',
        messageIncludes: [
          'unknown kind `Resorce`',
          'known kinds: Provider, Resource',
          'Did you mean `Resource`?',
        ],
      },
    ],
  },
  {
    name: 'document that is not a mapping',
    reason: 'a list or scalar document has no fields at all',
    files: { 'main.yaml': yaml('- kind: Resource') },
    expected: [
      {
        code: 'document.invalid',
        line: 1,
        column: 1,
        messageIncludes: ['must be a mapping with a `kind`'],
      },
    ],
  },
  {
    name: 'provider without name, spec and endpoint',
    reason: 'required Provider fields are reported each, at the document start',
    files: { 'providers.yaml': yaml('kind: Provider', 'type: openapi') },
    expected: [
      {
        code: 'field.required',
        line: 1,
        column: 1,
        path: 'name',
        messageIncludes: ['missing required field `name`'],
      },
      { code: 'field.required', line: 1, column: 1, path: 'spec', messageIncludes: ['`spec`'] },
      {
        code: 'field.required',
        line: 1,
        column: 1,
        path: 'endpoint',
        messageIncludes: ['`endpoint`'],
      },
    ],
  },
  {
    name: 'provider of unknown type',
    reason: 'only openapi exists today; the message lists the known types',
    files: { 'providers.yaml': PROVIDER.replace('type: openapi', 'type: openapy') + '\n' },
    expected: [
      {
        code: 'provider.unknown_type',
        line: 3,
        column: 7,
        path: 'type',
        messageIncludes: [
          'unknown provider type `openapy`',
          'known types: openapi',
          'Did you mean `openapi`?',
        ],
      },
    ],
  },
  {
    name: 'provider spec file missing',
    reason: 'spec paths are relative to the intent directory and must exist',
    files: { 'providers.yaml': PROVIDER.replace('./sandbox.json', './nope.json') + '\n' },
    expected: [
      {
        code: 'file.not_found',
        line: 4,
        column: 7,
        path: 'spec',
        messageIncludes: ['./nope.json does not exist', 'nope.json)'],
        hintIncludes: 'relative to the intent directory',
      },
    ],
  },
  {
    name: 'provider overlay file missing',
    reason: 'an overlay is checked like the spec',
    files: { 'providers.yaml': PROVIDER + '\noverlay: ./missing.overlay.yaml\n' },
    expected: [
      {
        code: 'file.not_found',
        line: 6,
        column: 10,
        path: 'overlay',
        messageIncludes: ['`overlay` file ./missing.overlay.yaml does not exist'],
      },
    ],
  },
  {
    name: 'provider endpoint not an http URL',
    reason: 'requests go to the endpoint: it must be http(s)',
    files: { 'providers.yaml': PROVIDER.replace('http://127.0.0.1:9/', 'ftp://x') + '\n' },
    expected: [
      {
        code: 'field.invalid',
        line: 5,
        column: 11,
        path: 'endpoint',
        messageIncludes: ['`endpoint` must be an http(s) URL', 'got ftp://x'],
      },
    ],
  },
  {
    name: 'provider auth with an inline secret',
    reason: 'secrets never live in intent; the value must not be echoed',
    files: { 'providers.yaml': PROVIDER + '\nauth: { header: X-API-Key, value: s3cret-token }\n' },
    expected: [
      {
        code: 'secret.inline',
        line: 6,
        column: 28,
        path: 'auth.value',
        messageIncludes: ['`auth.value` would put a secret in the intent'],
        messageExcludes: ['s3cret-token'],
        hintIncludes: 'use { fromEnv: VAR } or { fromFile: path }',
      },
    ],
  },
  {
    name: 'provider auth token field',
    reason: 'any auth field besides header/fromEnv/fromFile/prefix can only be a secret',
    files: {
      'providers.yaml': PROVIDER + '\nauth:\n  header: Authorization\n  token: abc123\n',
    },
    expected: [
      {
        code: 'secret.inline',
        line: 8,
        column: 3,
        path: 'auth.token',
        messageIncludes: ['`auth.token`'],
        messageExcludes: ['abc123'],
      },
    ],
  },
  {
    name: 'provider auth without a source',
    reason: 'the header alone does not say where the secret comes from',
    files: { 'providers.yaml': PROVIDER + '\nauth: { header: X-API-Key }\n' },
    expected: [
      {
        code: 'field.required',
        line: 6,
        column: 1,
        path: 'auth',
        messageIncludes: ['`auth` needs `fromEnv` or `fromFile`'],
      },
    ],
  },
  {
    name: 'provider unknown field and bad numbers',
    reason: 'misspelt fields are errors with a suggestion; limits must be sensible numbers',
    files: { 'providers.yaml': PROVIDER + '\nendpiont: x\nconcurrency: 0\nrateLimit: fast\n' },
    expected: [
      {
        code: 'field.unknown',
        line: 6,
        column: 1,
        path: 'endpiont',
        messageIncludes: [
          'unknown field `endpiont` in a Provider document',
          'Did you mean `endpoint`?',
        ],
      },
      {
        code: 'field.type',
        line: 7,
        column: 14,
        path: 'concurrency',
        messageIncludes: ['`concurrency` must be an integer >= 1, got integer 0'],
      },
      {
        code: 'field.type',
        line: 8,
        column: 12,
        path: 'rateLimit',
        messageIncludes: ['`rateLimit` must be a number >= 0, got string "fast"'],
      },
    ],
  },
  {
    name: 'duplicate provider name',
    reason: 'resource types are prefixed by provider names, which must be unique',
    files: { 'providers.yaml': PROVIDER + '\n---\n' + PROVIDER + '\n' },
    expected: [
      {
        code: 'provider.duplicate',
        line: 8,
        column: 7,
        path: 'name',
        messageIncludes: ['provider `sb` is already declared at', 'providers.yaml:1'],
      },
    ],
  },
  {
    name: 'resource unknown top-level field',
    reason: 'a misspelt `spec` would otherwise be silently ignored',
    files: {
      'main.yaml': yaml('kind: Resource', 'type: sb.volumes', 'name: data', 'specs: {}'),
    },
    expected: [
      {
        code: 'schema.required',
        line: 1,
        column: 1,
        path: 'spec.name',
        messageIncludes: ['`spec.name`'],
      },
      {
        code: 'schema.required',
        line: 1,
        column: 1,
        path: 'spec.instance_id',
        messageIncludes: ['missing required field `spec.instance_id`'],
      },
      {
        code: 'schema.required',
        line: 1,
        column: 1,
        path: 'spec.size',
        messageIncludes: ['`spec.size`'],
      },
      {
        code: 'field.unknown',
        line: 4,
        column: 1,
        path: 'specs',
        messageIncludes: ['unknown field `specs` in a Resource document', 'Did you mean `spec`?'],
      },
    ],
  },
  {
    name: 'type of an undeclared provider',
    reason: 'the message lists the declared providers',
    files: {
      'main.yaml': yaml('kind: Resource', 'type: sbx.networks', 'name: main', 'spec: {}'),
    },
    expected: [
      {
        code: 'type.unknown',
        line: 2,
        column: 7,
        path: 'type',
        messageIncludes: [
          'provider `sbx` is not declared',
          'declared providers: sb',
          'Did you mean `sb`?',
        ],
      },
    ],
  },
  {
    name: 'type the provider does not have',
    reason: 'the message lists the provider types and suggests the closest',
    files: {
      'main.yaml': yaml('kind: Resource', 'type: sb.network', 'name: main', 'spec: {}'),
    },
    expected: [
      {
        code: 'type.unknown',
        line: 2,
        column: 7,
        path: 'type',
        messageIncludes: [
          'provider `sb` has no resource type `network`',
          'its types: networks, instances, volumes',
          'Did you mean `networks`?',
        ],
      },
    ],
  },
  {
    name: 'malformed type and name',
    reason: 'type is provider.resourceType; names are lower-case',
    files: { 'main.yaml': yaml('kind: Resource', 'type: networks', 'name: Main', 'spec: {}') },
    expected: [
      {
        code: 'type.invalid',
        line: 2,
        column: 7,
        path: 'type',
        messageIncludes: ['must be <provider>.<resourceType>', 'got networks'],
      },
      {
        code: 'name.invalid',
        line: 3,
        column: 7,
        path: 'name',
        messageIncludes: ['resource name `Main` is invalid', 'lower-case letters, digits, - and _'],
      },
    ],
  },
  {
    name: 'spec that is not a mapping',
    reason: 'spec holds fields',
    files: { 'main.yaml': yaml('kind: Resource', 'type: sb.networks', 'name: main', 'spec: [a]') },
    expected: [
      {
        code: 'field.type',
        line: 4,
        column: 7,
        path: 'spec',
        messageIncludes: ['`spec` must be a mapping of fields, got list'],
      },
    ],
  },
  {
    name: 'unknown spec field',
    reason: 'schemas are closed: a misspelt field points at the key and lists the allowed ones',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.networks',
        'name: main',
        'spec:',
        '  name: main',
        '  cidr: 10.0.0.0/16',
        '  tag: {}',
      ),
    },
    expected: [
      {
        code: 'schema.unknown_field',
        line: 7,
        column: 3,
        path: 'spec.tag',
        messageIncludes: [
          'unknown field `tag` in spec',
          'allowed fields: cidr, name, tags',
          'Did you mean `tags`?',
        ],
      },
    ],
  },
  {
    name: 'unknown nested spec field under an open map',
    reason:
      'tags declares additionalProperties itself, so any key is allowed there; a wrong value type is not',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.networks',
        'name: main',
        'spec:',
        '  name: main',
        '  cidr: 10.0.0.0/16',
        '  tags: { team: 7 }',
      ),
    },
    expected: [
      {
        code: 'schema.type',
        line: 7,
        column: 17,
        path: 'spec.tags.team',
        messageIncludes: ['`spec.tags.team` must be string, got integer 7'],
      },
    ],
  },
  {
    name: 'wrong value type',
    reason: 'the message says the expected type and what was given',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.volumes',
        'name: data',
        'spec:',
        '  name: data',
        '  instance_id: i-1',
        '  size: "ten"',
      ),
    },
    expected: [
      {
        code: 'schema.type',
        line: 7,
        column: 9,
        path: 'spec.size',
        messageIncludes: ['`spec.size` must be integer, got string "ten"'],
      },
    ],
  },
  {
    name: 'value outside the enum',
    reason: 'the message lists the allowed values',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.instances',
        'name: web',
        'spec:',
        '  name: web',
        '  network_id: net-1',
        '  image: debian-12',
        '  size: smal',
      ),
    },
    expected: [
      {
        code: 'schema.enum',
        line: 8,
        column: 9,
        path: 'spec.size',
        messageIncludes: [
          'must be one of small, medium, large; got "smal"',
          'Did you mean `small`?',
        ],
      },
    ],
  },
  {
    name: 'missing required spec field',
    reason: 'points at the spec key, with the missing field as the path',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.networks',
        'name: main',
        'spec:',
        '  name: main',
      ),
    },
    expected: [
      {
        code: 'schema.required',
        line: 4,
        column: 1,
        path: 'spec.cidr',
        messageIncludes: ['missing required field `spec.cidr`'],
      },
    ],
  },
  {
    name: 'other schema keywords',
    reason: 'minimum, pattern and friends use the validator message',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.volumes',
        'name: data',
        'spec: { name: data, instance_id: i-1, size: 0 }',
      ),
    },
    expected: [
      {
        code: 'schema.invalid',
        line: 4,
        column: 45,
        path: 'spec.size',
        messageIncludes: ['`spec.size` must be >= 1'],
      },
    ],
  },
  {
    name: 'output-only field declared',
    reason: 'the platform sets it; reported once, as output_only, at the key',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.networks',
        'name: main',
        'spec:',
        '  name: main',
        '  cidr: 10.0.0.0/16',
        '  status: up',
      ),
    },
    expected: [
      {
        code: 'schema.output_only',
        line: 7,
        column: 3,
        path: 'spec.status',
        messageIncludes: ['`spec.status` is set by the platform and cannot be declared'],
      },
    ],
  },
  {
    name: 'inline secret in a sensitive field',
    reason: 'a password written in the file is refused without echoing it',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.instances',
        'name: web',
        'spec:',
        '  name: web',
        '  network_id: net-1',
        '  image: debian-12',
        '  admin_password: hunter2',
      ),
    },
    expected: [
      {
        code: 'secret.inline',
        line: 8,
        column: 19,
        path: 'spec.admin_password',
        messageIncludes: [
          '`spec.admin_password` is a secret and must not be written in the intent',
        ],
        messageExcludes: ['hunter2'],
        hintIncludes: 'use { fromEnv: VAR } or { fromFile: path }',
      },
    ],
  },
  {
    name: 'malformed secret reference',
    reason: 'a secret reference has exactly one source',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.instances',
        'name: web',
        'spec:',
        '  name: web',
        '  network_id: net-1',
        '  image: debian-12',
        '  admin_password: { fromEnv: A, fromFile: b }',
      ),
    },
    expected: [
      {
        code: 'secret.inline',
        line: 8,
        column: 19,
        path: 'spec.admin_password',
        messageIncludes: ['write exactly one of fromEnv or fromFile'],
      },
    ],
  },
  {
    name: 'duplicate address',
    reason: 'the second declaration is reported, naming the first',
    files: {
      'a.yaml': yaml(
        'kind: Resource',
        'type: sb.networks',
        'name: main',
        'spec: { name: main, cidr: 10.0.0.0/16 }',
      ),
      'b.yaml': yaml(
        '# the same network again',
        'kind: Resource',
        'type: sb.networks',
        'name: main',
        'spec: { name: main, cidr: 10.1.0.0/16 }',
      ),
    },
    expected: [
      {
        code: 'address.duplicate',
        file: 'b.yaml',
        line: 4,
        column: 7,
        path: 'name',
        messageIncludes: ['sb.networks/main is already declared at', 'a.yaml:1'],
      },
    ],
  },
  {
    name: 'malformed reference',
    reason: 'a ${…} that is not type/name.path',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.volumes',
        'name: data',
        'spec:',
        '  name: data',
        '  instance_id: ${instances/web}',
        '  size: 10',
      ),
    },
    expected: [
      {
        code: 'ref.invalid',
        line: 6,
        column: 16,
        path: 'spec.instance_id',
        messageIncludes: ['malformed reference `${instances/web}`', '${sb.networks/main.id}'],
      },
    ],
  },
  {
    name: 'dangling reference',
    reason: 'the target must be declared; the closest address is suggested',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.networks',
        'name: main',
        'spec: { name: main, cidr: 10.0.0.0/16 }',
        '---',
        'kind: Resource',
        'type: sb.instances',
        'name: web',
        'spec:',
        '  name: web',
        '  network_id: ${sb.networks/mian.id}',
        '  image: debian-12',
      ),
    },
    expected: [
      {
        code: 'ref.dangling',
        line: 11,
        column: 15,
        path: 'spec.network_id',
        messageIncludes: [
          '${sb.networks/mian.id} refers to sb.networks/mian, which no Resource document declares',
          'Did you mean `sb.networks/main`?',
        ],
      },
    ],
  },
  {
    name: 'self reference',
    reason: 'a spec field cannot depend on its own resource',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.networks',
        'name: main',
        'spec:',
        '  name: main',
        '  cidr: 10.0.0.0/16',
        '  tags: { self: "${sb.networks/main.id}" }',
      ),
    },
    expected: [
      {
        code: 'ref.self',
        line: 7,
        column: 17,
        path: 'spec.tags.self',
        messageIncludes: ['references its own resource (${sb.networks/main.id})'],
      },
    ],
  },
  {
    name: 'reference cycle',
    reason: 'printed as a → b → a, once, at the first member’s reference',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.networks',
        'name: main',
        'spec:',
        '  name: main',
        '  cidr: 10.0.0.0/16',
        '  tags: { owner: "${sb.instances/web.id}" }',
        '---',
        'kind: Resource',
        'type: sb.instances',
        'name: web',
        'spec:',
        '  name: web',
        '  network_id: ${sb.networks/main.id}',
        '  image: debian-12',
      ),
    },
    expected: [
      {
        code: 'ref.cycle',
        line: 7,
        column: 18,
        path: 'spec.tags.owner',
        messageIncludes: [
          'reference cycle: sb.networks/main → sb.instances/web → sb.networks/main',
        ],
      },
    ],
  },
  {
    name: 'lifecycle with a non-boolean',
    reason: 'YAML 1.2 reads `yes` as a string, which would silently mean "not stateful"',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.networks',
        'name: main',
        'spec: { name: main, cidr: 10.0.0.0/16 }',
        'lifecycle: { stateful: yes, stateless: true }',
      ),
    },
    expected: [
      {
        code: 'field.type',
        line: 5,
        column: 24,
        path: 'lifecycle.stateful',
        messageIncludes: ['`lifecycle.stateful` must be true or false, got string'],
      },
      {
        code: 'field.unknown',
        line: 5,
        column: 29,
        path: 'lifecycle.stateless',
        messageIncludes: ['unknown field `stateless` in `lifecycle`', 'allowed fields: stateful'],
      },
    ],
  },
  {
    name: 'check problems',
    reason:
      'unknown kinds list the known ones; CEL is parsed; http needs a url; check references must not dangle',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.networks',
        'name: main',
        'spec: { name: main, cidr: 10.0.0.0/16 }',
        'checks:',
        '  - smtp: { host: mail.example.org }',
        '  - cel: "observed.cidr =="',
        '  - http: { method: GET }',
        '  - http: { url: "http://${sb.instances/nope.private_ip}/" }',
        '  - { http: { url: "http://x/" }, cel: "true" }',
      ),
    },
    expected: [
      {
        code: 'check.unknown_kind',
        line: 6,
        column: 5,
        path: 'checks[0].smtp',
        messageIncludes: ['unknown check kind `smtp`', 'known kinds: http, cel, dns'],
      },
      {
        code: 'check.cel_syntax',
        line: 7,
        column: 10,
        path: 'checks[1].cel',
        messageIncludes: ['CEL expression does not parse: Unexpected token: EOF'],
      },
      {
        code: 'field.required',
        line: 8,
        column: 5,
        path: 'checks[2].http.url',
        messageIncludes: ['missing required field `checks[2].http.url`'],
      },
      {
        code: 'ref.dangling',
        line: 9,
        column: 18,
        path: 'checks[3].http.url',
        messageIncludes: ['refers to sb.instances/nope'],
      },
      {
        code: 'check.invalid',
        line: 10,
        column: 5,
        path: 'checks[4]',
        messageIncludes: ['a check has exactly one kind; this one has http and cel'],
      },
    ],
  },
  {
    name: 'check with bad http fields',
    reason: 'statuses are HTTP codes; the url must be http(s)',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.networks',
        'name: main',
        'spec: { name: main, cidr: 10.0.0.0/16 }',
        'checks:',
        '  - name: health',
        '    http: { url: "ftp://x/", expectStatus: [200, 42], timeout: 5 }',
      ),
    },
    expected: [
      {
        code: 'field.invalid',
        line: 7,
        column: 18,
        path: 'checks[0].http.url',
        messageIncludes: ['`url` must be an http(s) URL, got ftp://x/'],
      },
      {
        code: 'field.invalid',
        line: 7,
        column: 44,
        path: 'checks[0].http.expectStatus',
        messageIncludes: ['`expectStatus` must be an HTTP status (100-599) or a list of them'],
      },
      {
        code: 'field.unknown',
        line: 7,
        column: 55,
        path: 'checks[0].http.timeout',
        messageIncludes: ['unknown field `timeout` in an http check', 'Did you mean `timeoutMs`?'],
      },
    ],
  },
  {
    name: 'duplicate check names',
    reason: 'check results are recorded by name',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.networks',
        'name: main',
        'spec: { name: main, cidr: 10.0.0.0/16 }',
        'checks:',
        '  - { name: up, cel: "true" }',
        '  - { name: up, http: { url: "http://x/" } }',
      ),
    },
    expected: [
      {
        code: 'check.duplicate_name',
        line: 7,
        column: 13,
        path: 'checks[1].name',
        messageIncludes: ['check name `up` is already used by checks[0]'],
      },
    ],
  },
  {
    name: 'moved.from not an address',
    reason: 'a move names the old address of the resource',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.networks',
        'name: primary',
        'moved: { from: main }',
        'spec: { name: main, cidr: 10.0.0.0/16 }',
      ),
    },
    expected: [
      {
        code: 'moved.invalid',
        line: 4,
        column: 16,
        path: 'moved.from',
        messageIncludes: ["`moved.from` must be the resource's old address"],
      },
    ],
  },
  {
    name: 'moved.from of another type',
    reason: 'a move keeps the object, so it keeps its type',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.networks',
        'name: primary',
        'moved: { from: sb.instances/main, to: x }',
        'spec: { name: main, cidr: 10.0.0.0/16 }',
      ),
    },
    expected: [
      {
        code: 'moved.type',
        line: 4,
        column: 16,
        path: 'moved.from',
        messageIncludes: ['names a sb.instances but this resource is a sb.networks'],
      },
      {
        code: 'field.unknown',
        line: 4,
        column: 35,
        path: 'moved.to',
        messageIncludes: ['unknown field `to` in `moved`'],
      },
    ],
  },
  {
    name: 'moved.from still declared',
    reason: 'two declared addresses cannot match one object',
    files: {
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.networks',
        'name: main',
        'spec: { name: main, cidr: 10.0.0.0/16 }',
        '---',
        'kind: Resource',
        'type: sb.networks',
        'name: primary',
        'moved: { from: sb.networks/main }',
        'spec: { name: primary, cidr: 10.1.0.0/16 }',
      ),
    },
    expected: [
      {
        code: 'moved.still_declared',
        line: 9,
        column: 16,
        path: 'moved.from',
        messageIncludes: ['names sb.networks/main, which is still declared at'],
      },
    ],
  },
];

describe('loadIntent reports bad input', () => {
  it.each(cases)('$name', async (c) => {
    const dir = await fixture({ 'providers.yaml': PROVIDER + '\n', ...c.files });
    const { intent, diagnostics } = await loadIntent(dir, fakeDescribe());
    expect(intent, c.reason).toBeUndefined();
    const got = diagnostics.map((d) => ({
      code: d.code,
      file: d.file,
      line: d.line,
      column: d.column,
      path: d.path,
    }));
    const want = c.expected.map((e) => ({
      code: e.code,
      file: join(
        dir,
        e.file ??
          (e.code.startsWith('provider') || c.files['providers.yaml']
            ? 'providers.yaml'
            : 'main.yaml'),
      ),
      line: e.line,
      column: e.column,
      path: e.path,
    }));
    expect(got, c.reason).toEqual(want);
    c.expected.forEach((e, i) => {
      const d = diagnostics[i]!;
      expect(d.severity).toBe(e.severity ?? 'error');
      for (const text of e.messageIncludes) expect(d.message).toContain(text);
      for (const text of e.messageExcludes ?? []) {
        expect(d.message).not.toContain(text);
        expect(d.hint ?? '').not.toContain(text);
      }
      if (e.hintIncludes) expect(d.hint).toContain(e.hintIncludes);
    });
  });
});

describe('loadIntent reads a good intent', () => {
  const files = {
    'providers.yaml': yaml(PROVIDER, 'auth: { header: X-API-Key, fromEnv: SB_KEY }'),
    'main.yaml': yaml(
      'kind: Resource',
      'type: sb.volumes',
      'name: data',
      'spec:',
      '  name: data',
      '  instance_id: ${sb.instances/web.id}',
      '  size: ${sb.instances/web.disk_gb}', // an integer field holding a reference: no type error
      '---',
      'kind: Resource',
      'type: sb.networks',
      'name: main',
      'spec: { name: main, cidr: 10.0.0.0/16 }',
      'lifecycle: { stateful: true }',
      '---',
      'kind: Resource',
      'type: sb.instances',
      'name: web',
      'spec:',
      '  name: web',
      '  network_id: ${sb.networks/main.id}', // pattern ^net- is not applied to a reference
      '  image: debian-12',
      '  admin_password: { fromEnv: WEB_PASSWORD }',
      '  tags: { team: "web-${sb.networks/main.name}" }',
      'checks:',
      '  - http: { url: "http://${sb.instances/web.private_ip}:8080/health" }',
      '  - cel: "observed.status == \'running\'"',
      '  - name: sized',
      '    cel: { expr: "observed.size == desired.size" }',
    ),
  };

  it('produces providers and resources with defaults, dependencies and checks', async () => {
    const dir = await fixture(files);
    const fake = fakeDescribe();
    const { intent, diagnostics } = await loadIntent(dir, {
      describe: fake.describe,
      env: { SB_KEY: 'k' },
    });
    // WEB_PASSWORD is not in env: a warning, which does not block the intent.
    expect(diagnostics).toEqual([
      expect.objectContaining({
        code: 'secret.unavailable',
        severity: 'warning',
        file: join(dir, 'main.yaml'),
        line: 22,
        column: 30,
        path: 'spec.admin_password.fromEnv',
      }),
    ]);
    expect(intent).toBeDefined();
    expect(intent!.dir).toBe(dir);
    const provider: ProviderDecl = {
      kind: 'Provider',
      name: 'sb',
      type: 'openapi',
      spec: join(dir, 'sandbox.json'),
      endpoint: 'http://127.0.0.1:9/',
      auth: { header: 'X-API-Key', fromEnv: 'SB_KEY' },
      concurrency: 16,
      rateLimit: 0,
      timeoutMs: 10000,
      maxResponseBytes: 16 * 1024 * 1024,
      source: { file: join(dir, 'providers.yaml'), line: 1, column: 1 },
    };
    expect(intent!.providers).toEqual([provider]);
    expect(fake.calls).toEqual([provider]);

    const main = join(dir, 'main.yaml');
    expect(intent!.resources.map((r) => [r.address, r.dependsOn, r.lifecycle.stateful])).toEqual([
      ['sb.volumes/data', ['sb.instances/web'], false],
      ['sb.networks/main', [], true],
      ['sb.instances/web', ['sb.networks/main'], false],
    ]);
    const web = intent!.resources[2]!;
    expect(web).toMatchObject({
      kind: 'Resource',
      type: 'sb.instances',
      provider: 'sb',
      resourceType: 'instances',
      name: 'web',
      source: { file: main, line: 15, column: 1 },
    });
    // The spec is kept as written: references unresolved, the secret as a reference.
    expect(web.spec).toEqual({
      name: 'web',
      network_id: '${sb.networks/main.id}',
      image: 'debian-12',
      admin_password: { fromEnv: 'WEB_PASSWORD' },
      tags: { team: 'web-${sb.networks/main.name}' },
    });
    expect(web.checks).toEqual([
      {
        kind: 'http',
        name: 'http-0',
        url: 'http://${sb.instances/web.private_ip}:8080/health',
        method: 'GET',
        expectStatus: [200],
        timeoutMs: 5000,
        source: { file: main, line: 25, column: 5 },
      },
      {
        kind: 'cel',
        name: 'cel-1',
        expr: "observed.status == 'running'",
        source: { file: main, line: 26, column: 5 },
      },
      {
        kind: 'cel',
        name: 'sized',
        expr: 'observed.size == desired.size',
        source: { file: main, line: 27, column: 5 },
      },
    ]);
  });

  it('reads explicit provider settings and http check options', async () => {
    const dir = await fixture({
      'providers.yaml': yaml(
        PROVIDER,
        'overlay: ./sandbox.json',
        'concurrency: 2',
        'rateLimit: 2.5',
        'timeoutMs: 3000',
        'auth: { header: Authorization, prefix: "Bearer ", fromFile: secrets/token }',
      ),
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.networks',
        'name: main',
        'spec: { name: main, cidr: 10.0.0.0/16 }',
        'checks:',
        '  - http: { url: "https://example.org/", method: post, expectStatus: 204, bodyContains: ok, timeoutMs: 100 }',
      ),
    });
    await mkdir(join(dir, 'secrets'));
    await writeFile(join(dir, 'secrets', 'token'), 'tok\n');
    const { intent, diagnostics } = await loadIntent(dir, fakeDescribe());
    expect(diagnostics).toEqual([]);
    expect(intent!.providers[0]).toMatchObject({
      overlay: join(dir, 'sandbox.json'),
      concurrency: 2,
      rateLimit: 2.5,
      timeoutMs: 3000,
      auth: { header: 'Authorization', prefix: 'Bearer ', fromFile: join(dir, 'secrets/token') },
    });
    expect(intent!.resources[0]!.checks[0]).toMatchObject({
      method: 'POST',
      expectStatus: [204],
      bodyContains: 'ok',
      timeoutMs: 100,
    });
  });
});

describe('loadIntent reports everything at once', () => {
  it('reports errors from several files and documents in file, line, column order', async () => {
    const dir = await fixture({
      'a.yaml': yaml(
        'kind: Resource',
        'type: sb.volumes',
        'name: data',
        'spec: { name: data, instance_id: "${sb.instances/ghost.id}", size: -1 }',
        '---',
        'kind: Resource',
        'type: sb.networks',
        'name: main',
        'spec: { name: main cidr: x }',
        '---',
        'kind: Widget',
      ),
      'b.yaml': yaml(
        'kind: Provider',
        'name: sb',
        'type: openapi',
        'spec: ./sandbox.json',
        'endpoint: http://127.0.0.1:9/',
        '---',
        'kind: Resource',
        'type: sb.networks',
        'name: other',
        'spec: { name: other }',
      ),
    });
    const { intent, diagnostics } = await loadIntent(dir, fakeDescribe());
    expect(intent).toBeUndefined();
    expect(
      diagnostics.map((d) => `${d.file!.slice(dir.length + 1)}:${d.line}:${d.column} ${d.code}`),
    ).toEqual([
      'a.yaml:4:34 ref.dangling',
      'a.yaml:4:68 schema.invalid',
      'a.yaml:9:15 yaml.syntax',
      'a.yaml:11:7 kind.unknown',
      'b.yaml:10:1 schema.required',
    ]);
  });

  it('reports a missing directory', async () => {
    const dir = join(await fixture({}), 'nope');
    const { intent, diagnostics } = await loadIntent(dir, fakeDescribe());
    expect(intent).toBeUndefined();
    expect(diagnostics).toEqual([
      expect.objectContaining({
        code: 'intent.dir_missing',
        message: `intent directory ${dir} does not exist`,
        hint: expect.stringContaining('directory that holds your intent YAML files'),
      }),
    ]);
  });

  it('reports a directory without YAML files', async () => {
    const dir = await fixture({ 'notes.txt': 'kind: Resource' });
    await mkdir(join(dir, 'nested.yaml')); // a directory, not a file: not read
    const { diagnostics } = await loadIntent(dir, fakeDescribe());
    expect(diagnostics).toEqual([
      expect.objectContaining({
        code: 'intent.empty',
        message: `intent directory ${dir} has no .yaml or .yml files`,
        hint: expect.stringContaining(join(dir, 'main.yaml')),
      }),
    ]);
  });

  it('reports a provider that cannot be described at its spec, without cascading', async () => {
    const dir = await fixture({
      'providers.yaml': PROVIDER + '\n',
      'main.yaml': yaml('kind: Resource', 'type: sb.whatever', 'name: x', 'spec: { any: 1 }'),
    });
    const failure: Diagnostic = {
      code: 'provider.spec_invalid',
      severity: 'error',
      message: 'sandbox.json is not an OpenAPI document',
    };
    const { intent, diagnostics } = await loadIntent(dir, fakeDescribe(failure));
    expect(intent).toBeUndefined();
    expect(diagnostics).toEqual([
      {
        ...failure,
        file: join(dir, 'providers.yaml'),
        line: 4,
        column: 7,
        path: 'spec',
      },
    ]);
  });

  it('reports a describe callback that throws', async () => {
    const dir = await fixture({ 'providers.yaml': PROVIDER + '\n' });
    const { diagnostics } = await loadIntent(dir, {
      describe: () => Promise.reject(new Error('connection reset')),
    });
    expect(diagnostics).toEqual([
      expect.objectContaining({
        code: 'provider.describe_failed',
        message: 'cannot load provider sb: connection reset',
        line: 4,
        column: 7,
        path: 'spec',
      }),
    ]);
  });

  it('warns when an auth variable is not set in the given environment', async () => {
    const dir = await fixture({
      'providers.yaml': yaml(PROVIDER, 'auth: { header: X-API-Key, fromEnv: SB_KEY }'),
    });
    const withEnv = await loadIntent(dir, { ...fakeDescribe(), env: {} });
    expect(withEnv.intent).toBeDefined();
    expect(withEnv.diagnostics).toEqual([
      expect.objectContaining({
        code: 'secret.unavailable',
        severity: 'warning',
        message: 'environment variable SB_KEY is not set',
        line: 6,
        column: 37,
        path: 'auth.fromEnv',
      }),
    ]);
    // Without an environment to judge by, nothing is said.
    expect((await loadIntent(dir, fakeDescribe())).diagnostics).toEqual([]);
  });

  it('does not describe an invalid provider, nor report its resources as untyped', async () => {
    const dir = await fixture({
      'providers.yaml': PROVIDER.replace('http://127.0.0.1:9/', 'nowhere') + '\n',
      'main.yaml': yaml('kind: Resource', 'type: sb.networks', 'name: main', 'spec: {}'),
    });
    const fake = fakeDescribe();
    const { diagnostics } = await loadIntent(dir, fake);
    expect(fake.calls).toEqual([]);
    expect(diagnostics.map((d) => d.code)).toEqual(['field.invalid']);
  });
});

describe('loadIntent on a very large file', () => {
  it('reports 130,000 bad documents without running out of stack', async () => {
    const dir = await fixture({ 'main.yaml': '--- 1\n'.repeat(130_000) });
    const { describe: d } = fakeDescribe();
    const result = await loadIntent(dir, { describe: d });
    expect(result.intent).toBeUndefined();
    expect(result.diagnostics).toHaveLength(130_000);
    expect(result.diagnostics[0]).toMatchObject({ code: 'document.invalid', line: 1 });
  });
});
