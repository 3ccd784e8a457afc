import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ObservedObject, Provider, ResourceTypeInfo } from '../core/index.js';
import { TendError } from '../core/index.js';
import { openStore } from '../store/index.js';
import type { AcceptRequest } from './accept.js';
import { accept } from './accept.js';
import type { AppContext } from './context.js';
import { defaultContext } from './context.js';
import { defaultStorePath } from './workspace.js';

// The application layer of `tend accept` with a provider built from functions: where the value
// comes from, what is refused, and what is written. The YAML patching itself is yaml-patch.test.ts.

const SERVICES: ResourceTypeInfo = {
  name: 'services',
  schema: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      replicas: { type: 'integer' },
      image: { type: 'string' },
      dns: { type: 'string' },
      tags: { type: 'object', additionalProperties: { type: 'string' } },
      token: { type: 'string' },
      password: { type: 'string', format: 'password' },
    },
  },
  identity: 'marker',
  idField: 'id',
  createOnly: [],
  outputOnly: ['id', 'status'],
  sensitive: ['token'],
  markerField: 'tags',
  lifecycle: 'annotations',
  idempotencyKey: false,
};

const PROVIDER = `kind: Provider
name: sb
type: openapi
spec: http://127.0.0.1:9/openapi.json
endpoint: http://127.0.0.1:9
`;

const APP = `kind: Resource
type: sb.services
name: api
spec:
  name: api
  replicas: 2 # two is enough
  dns: api.example.org.
  tags: { team: core }
  token: { fromEnv: API_TOKEN }
`;

const OBSERVED = {
  id: 'svc-1',
  name: 'api',
  replicas: 5,
  image: 'nginx:1.28',
  dns: 'API.example.org',
  status: 'running',
  tags: { team: 'web', hotfix: 'INC-42', 'tend.workspace': 'w', 'tend.address': 'sb.services/api' },
};

describe('accept', () => {
  let dir: string;
  let read: (id: string) => Promise<ObservedObject | undefined>;

  const provider = (): Provider => ({
    name: 'sb',
    describe: () => ({ types: [SERVICES], auditFeed: false, warnings: [] }),
    list: () => Promise.resolve([]),
    read: (_type, id) => read(id),
    create: () => Promise.reject(new Error('accept never creates')),
    update: () => Promise.reject(new Error('accept never updates')),
    delete: () => Promise.reject(new Error('accept never deletes')),
    evaluate: () => Promise.reject(new Error('accept never evaluates')),
    normalize: (_type, path, v) =>
      path === 'dns' && typeof v === 'string' ? v.toLowerCase().replace(/\.$/, '') : v,
  });
  const context = (): AppContext =>
    defaultContext({
      env: { API_TOKEN: 'tok-0123456789' },
      providers: new Map([['openapi', () => Promise.resolve(provider())]]),
      notice: () => {},
    });
  const run = (request: Omit<AcceptRequest, 'dir'>, ctx = context()) =>
    accept(ctx, { dir, ...request });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tend-accept-'));
    writeFileSync(join(dir, 'provider.yaml'), PROVIDER);
    writeFileSync(join(dir, 'app.yaml'), APP);
    read = (id) => Promise.resolve({ type: 'services', id, fields: OBSERVED });
    const store = await openStore(defaultStorePath(dir));
    await store.putTwin({
      address: 'sb.services/api',
      type: 'sb.services',
      objectId: 'svc-1',
      fields: { ...OBSERVED, replicas: 4 },
      stateful: false,
      dependsOn: [],
      observedAt: '2026-11-25T10:00:00.000Z',
    });
    await store.close();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the platform and prints the patch; writes nothing without write', async () => {
    const r = await run({ address: 'sb.services/api', field: 'replicas' });
    expect(r).toMatchObject({
      outcome: 'patched',
      value: 5,
      valueSource: 'platform',
      file: 'app.yaml',
      line: 6,
      written: false,
      notes: [],
    });
    expect(r.diff).toBe(
      [
        '--- a/app.yaml',
        '+++ b/app.yaml',
        '@@ -3,7 +3,7 @@',
        ' name: api',
        ' spec:',
        '   name: api',
        '-  replicas: 2 # two is enough',
        '+  replicas: 5 # two is enough',
        '   dns: api.example.org.',
        '   tags: { team: core }',
        '   token: { fromEnv: API_TOKEN }',
        '',
      ].join('\n'),
    );
    expect(readFileSync(join(dir, 'app.yaml'), 'utf8')).toBe(APP);
  });

  it('writes the file with write', async () => {
    const r = await run({ address: 'sb.services/api', field: 'spec.replicas', write: true });
    expect(r.written).toBe(true);
    expect(readFileSync(join(dir, 'app.yaml'), 'utf8')).toBe(
      APP.replace('replicas: 2', 'replicas: 5'),
    );
  });

  it('takes only the declared keys of a declared mapping (no hotfix tag, no marker)', async () => {
    const r = await run({ address: 'sb.services/api', field: 'tags' });
    expect(r.value).toEqual({ team: 'web' });
    expect(r.diff).toContain('-  tags: { team: core }\n+  tags: { team: web }\n');
  });

  it('takes an undeclared field whole, without Tend’s marker', async () => {
    const image = await run({ address: 'sb.services/api', field: 'image' });
    expect(image.diff).toContain('+  image: nginx:1.28\n');
    const hotfix = await run({ address: 'sb.services/api', field: 'tags.hotfix' });
    expect(hotfix.diff).toContain(
      '-  tags: { team: core }\n+  tags: { team: core, hotfix: INC-42 }',
    );
  });

  it('falls back to what Tend last observed when the platform cannot be read, and says so', async () => {
    read = () => Promise.reject(new TendError('http.unreachable', 'connection refused'));
    const r = await run({ address: 'sb.services/api', field: 'replicas' });
    expect(r).toMatchObject({ value: 4, valueSource: 'twin' });
    expect(r.notes).toEqual([
      'the platform could not be read (connection refused); using what Tend last observed, at 2026-11-25T10:00:00.000Z',
    ]);
  });

  it('takes an explicit value without reading the platform', async () => {
    read = () => Promise.reject(new Error('not called'));
    const r = await run({ address: 'sb.services/api', field: 'replicas', value: 7 });
    expect(r).toMatchObject({ value: 7, valueSource: 'explicit', notes: [] });
  });

  it('says nothing changes when the values differ only by normalisation', async () => {
    const r = await run({ address: 'sb.services/api', field: 'dns' });
    expect(r.outcome).toBe('unchanged');
    expect(r.notes).toEqual(['the declared dns and the observed one are the same once normalised']);
  });

  it.each([
    ['a sensitive field', 'token', 'accept.secret', /is a secret \(services marks it sensitive\)/],
    ['a password field', 'password', 'accept.secret', /its schema marks it a password/],
    ['a field the platform sets', 'status', 'accept.output_only', /is set by the platform/],
    ['an unknown field', 'replica', 'accept.unknown_field', /did you mean replicas\?/],
    ['a field that is not a path', 'tags..team', 'accept.invalid_field', /is not a field path/],
  ])('refuses %s', async (_name, field, code, message) => {
    const e = await run({ address: 'sb.services/api', field }).catch((x: unknown) => x);
    expect(e).toMatchObject({ code });
    expect((e as Error).message).toMatch(message);
  });

  it('refuses a value holding a secret Tend knows, and never shows it', async () => {
    const ctx = context();
    ctx.redactor.add('tok-0123456789');
    const e = await run(
      { address: 'sb.services/api', field: 'image', value: 'x-tok-0123456789' },
      ctx,
    ).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'accept.secret' });
    expect((e as Error).message).not.toContain('tok-0123456789');
  });

  it('names the nearest addresses of an unknown one', async () => {
    const e = await run({ address: 'sb.service/api', field: 'replicas' }).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'accept.unknown_address' });
    expect((e as Error).message).toBe(
      'no resource sb.service/api in the intent; did you mean sb.services/api?',
    );
    const bare = await run({ address: 'api', field: 'replicas' }).catch((x: unknown) => x);
    expect((bare as Error).message).toBe(
      'not an address (provider.type/name): api; did you mean sb.services/api?',
    );
  });

  it('needs the object to have been observed, and to exist', async () => {
    read = () => Promise.resolve(undefined);
    await expect(run({ address: 'sb.services/api', field: 'replicas' })).rejects.toMatchObject({
      code: 'accept.object_gone',
    });
    rmSync(join(dir, '.tend'), { recursive: true, force: true });
    await expect(run({ address: 'sb.services/api', field: 'replicas' })).rejects.toMatchObject({
      code: 'accept.not_observed',
    });
  });

  it('refuses an intent with errors', async () => {
    writeFileSync(join(dir, 'app.yaml'), `${APP}  nonsense: [\n`);
    await expect(run({ address: 'sb.services/api', field: 'replicas' })).rejects.toMatchObject({
      code: 'intent.invalid',
    });
  });
});
