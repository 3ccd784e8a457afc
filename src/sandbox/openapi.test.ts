import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compileErrors, validate } from '@readme/openapi-parser';
import { format, resolveConfig } from 'prettier';
import { describe, expect, it } from 'vitest';
import { createSandbox } from './app.js';
import { sandboxClient } from './client.js';
import { buildOpenApiDocument } from './openapi.js';
import { TYPES } from './spec.js';

const FILE = fileURLToPath(new URL('./openapi.json', import.meta.url));
// The document is walked freely below; each assertion states the shape it expects.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const doc = buildOpenApiDocument() as any;
const schemas = doc.components.schemas;

describe('the committed openapi.json', () => {
  // To regenerate after changing spec.ts or openapi.ts:
  //   TEND_WRITE_SANDBOX_OPENAPI=1 npx vitest run src/sandbox/openapi.test.ts
  it('equals the document a sandbox that may lag serves (it promises nothing about reads)', async () => {
    const served = await sandboxClient(createSandbox({ consistentReads: false }).app).get(
      '/openapi.json',
    );
    expect(served.status).toBe(200);
    if (process.env['TEND_WRITE_SANDBOX_OPENAPI'] === '1') {
      const options = (await resolveConfig(FILE)) ?? {};
      writeFileSync(
        FILE,
        await format(JSON.stringify(served.body), { ...options, parser: 'json' }),
      );
    }
    const committed = JSON.parse(readFileSync(FILE, 'utf8'));
    expect(
      served.body,
      'src/sandbox/openapi.json is stale: regenerate it (see the comment above this test)',
    ).toEqual(committed);
  });
});

describe('consistent reads: what the served document promises', () => {
  const served = async (sandbox: ReturnType<typeof createSandbox>) =>
    (await sandboxClient(sandbox.app).get('/openapi.json')).body as Record<string, unknown>;
  const committed = () => JSON.parse(readFileSync(FILE, 'utf8')) as Record<string, unknown>;

  it.each([
    { reason: 'a sandbox without faults: reads see writes at once', options: {}, want: true },
    {
      reason: 'started with eventual consistency: no promise',
      options: { faults: { eventualConsistencyMs: 500 } },
      want: false,
    },
    {
      reason: 'started able to switch eventual consistency on later: no promise',
      options: { consistentReads: false },
      want: false,
    },
  ])('$reason', async ({ options, want }) => {
    const doc = await served(createSandbox(options));
    const { ['x-tend-consistent-reads']: promise, ...rest } = doc;
    expect(promise).toBe(want ? true : undefined);
    // Otherwise the committed document.
    expect(rest).toEqual(committed());
  });

  it('a sandbox that promised refuses eventual consistency at run time, and says how to get it', async () => {
    const sandbox = createSandbox();
    const api = sandboxClient(sandbox.app);
    const put = await api.put('/_sandbox/faults', { eventualConsistencyMs: 1000 });
    expect(put.status).toBe(409);
    expect(put.body).toEqual({
      code: 'conflict',
      field: 'eventualConsistencyMs',
      message:
        'this sandbox promises consistent reads in its OpenAPI document (x-tend-consistent-reads: true), so eventualConsistencyMs must stay 0; start it with --eventual-consistency <ms> (0 to start without lag) to switch eventual consistency on later',
    });
    expect(sandbox.getFaults().eventualConsistencyMs).toBe(0);
    // Other faults still switch.
    expect((await api.put('/_sandbox/faults', { latencyMs: 5 })).status).toBe(200);
    expect((await api.put('/_sandbox/faults', { eventualConsistencyMs: 0 })).status).toBe(200);
  });

  it('a sandbox that did not promise switches eventual consistency freely', () => {
    const sandbox = createSandbox({ consistentReads: false });
    expect(sandbox.setFaults({ eventualConsistencyMs: 1000 }).eventualConsistencyMs).toBe(1000);
  });

  it('promising consistent reads with eventual consistency at start is refused, naming the setting', () => {
    expect(() =>
      createSandbox({ consistentReads: true, faults: { eventualConsistencyMs: 10 } }),
    ).toThrow(
      'eventualConsistencyMs must be 0 on a sandbox that promises consistent reads (consistentReads: true)',
    );
  });

  it('reads see writes at once when it promises so: a create is listed, a delete is gone', async () => {
    const api = sandboxClient(createSandbox().app);
    for (let i = 0; i < 20; i++) {
      const created = await api.post('/networks', { name: `n${i}`, cidr: `10.${i}.0.0/16` });
      expect(created.status).toBe(201);
      const id = (created.body as { id: string }).id;
      const listed = (await api.get('/networks')).body as { id: string }[];
      expect(listed.map((n) => n.id)).toContain(id);
      expect((await api.get(`/networks/${id}`)).status).toBe(200);
      expect((await api.delete(`/networks/${id}`)).status).toBe(204);
      const after = (await api.get('/networks')).body as { id: string }[];
      expect(after.map((n) => n.id)).not.toContain(id);
    }
  });
});

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1.0 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(doc));
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(result.warnings).toEqual([]);
  });

  it('declares the lifecycle endpoint and the audit feed', () => {
    expect(doc['x-tend-lifecycle']).toEqual({ path: '/lifecycle/evaluate' });
    expect(doc['x-tend-audit']).toEqual({ path: '/audit' });
    expect(doc.paths['/lifecycle/evaluate'].post.operationId).toBe('evaluateLifecycle');
    expect(doc.paths['/audit'].get.operationId).toBe('listAudit');
  });

  it('documents the attribution headers on every mutation and the actor kind in audit entries', () => {
    const headers = ['Actor', 'ActorKind', 'Intent', 'Motivation'].map((name) => ({
      $ref: `#/components/parameters/${name}`,
    }));
    expect(doc.components.parameters.ActorKind).toMatchObject({
      name: 'X-Tend-Actor-Kind',
      in: 'header',
      required: false,
    });
    for (const t of TYPES) {
      const item = doc.paths[`/${t.name}/{${t.idField}}`];
      for (const operation of [doc.paths[`/${t.name}`].post, item.patch, item.put, item.delete]) {
        expect(operation.parameters).toEqual(expect.arrayContaining(headers));
      }
    }
    expect(schemas.AuditEntry.required).toContain('actorKind');
    expect(schemas.AuditEntry.properties.actorKind).toMatchObject({ type: ['string', 'null'] });
  });

  it('has the six operations per type, with ids named after the type', () => {
    for (const t of TYPES) {
      const s = t.singular;
      const collection = doc.paths[`/${t.name}`];
      const item = doc.paths[`/${t.name}/{${t.idField}}`];
      expect(collection.get.operationId).toBe(`list${s}s`);
      expect(collection.post.operationId).toBe(`create${s}`);
      expect(item.get.operationId).toBe(`get${s}`);
      expect(item.patch.operationId).toBe(`update${s}`);
      expect(item.put.operationId).toBe(`replace${s}`);
      expect(item.delete.operationId).toBe(`delete${s}`);
      expect(collection.post.parameters).toContainEqual({
        $ref: '#/components/parameters/IdempotencyKey',
      });
      expect(schemas[s].additionalProperties).toBe(false);
      expect(schemas[`${s}Patch`].additionalProperties).toBe(false);
      expect(schemas[`${s}Patch`].required).toBeUndefined();
    }
    expect(doc.paths['/buckets/{name}']).toBeDefined();
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({
      name: 'Idempotency-Key',
      in: 'header',
    });
  });

  it('marks read-only, write-only, create-only and sensitive fields', () => {
    expect(schemas.Network.properties.id).toMatchObject({ readOnly: true });
    expect(schemas.Network.properties.status).toMatchObject({
      readOnly: true,
      enum: ['available'],
    });
    expect(schemas.Network.properties.created_at).toMatchObject({
      readOnly: true,
      format: 'date-time',
    });
    expect(schemas.Network.properties.cidr['x-tend-immutable']).toBe(true);
    expect(schemas.Network.required).toEqual(['name', 'cidr']);
    expect(schemas.Instance.properties.image['x-tend-immutable']).toBe(true);
    expect(schemas.Instance.properties.private_ip.readOnly).toBe(true);
    expect(schemas.Instance.properties.size).toMatchObject({
      enum: ['small', 'medium', 'large'],
      default: 'small',
    });
    expect(schemas.Instance.properties.admin_password).toMatchObject({
      type: 'string',
      writeOnly: true,
      format: 'password',
      'x-tend-sensitive': true,
    });
    expect(schemas.Service.properties.replicas).toMatchObject({
      minimum: 0,
      maximum: 100,
      default: 1,
    });
    expect(schemas.Bucket.properties.name.pattern).toBe('^[a-z0-9][a-z0-9.-]{2,62}$');
    expect(schemas.Bucket.properties).not.toHaveProperty('id');
    expect(schemas.Network.properties.tags).toMatchObject({
      type: 'object',
      additionalProperties: { type: 'string' },
    });
  });

  it('keeps the volume shrink rule out of the document', () => {
    const size = schemas.Volume.properties.size;
    expect(size).toEqual({
      type: 'integer',
      minimum: 1,
      maximum: 16384,
      description: 'Size in GiB.',
    });
    expect(JSON.stringify(doc)).not.toMatch(/shrink/i);
  });

  it('declares the API key scheme and leaves the admin routes out', () => {
    expect(doc.components.securitySchemes.apiKey).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
    });
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/_sandbox'))).toEqual([]);
  });
});
