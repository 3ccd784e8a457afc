import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TendError, getPath } from '../../../core/index.js';
import { loadOpenApiDocument, prepareOpenApiDocument, readRawDocument } from './load-document.js';

const dir = mkdtempSync(join(tmpdir(), 'tend-load-document-'));
const write = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

const YAML_DOC = `
openapi: 3.0.3
info: { title: t, version: '1' }
paths:
  /volumes:
    post:
      requestBody:
        content:
          application/json:
            schema: { $ref: '#/components/schemas/Volume' }
      responses: { '201': { description: ok } }
components:
  schemas:
    Volume:
      type: object
      properties:
        size: { type: integer }
`;

let server: ReturnType<typeof createServer>;
let base = '';
const seenHeaders: Record<string, string | undefined>[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seenHeaders.push({ 'x-api-key': req.headers['x-api-key'] as string | undefined });
    if (req.url === '/openapi.yaml') {
      res.writeHead(200, { 'content-type': 'application/yaml' }).end(YAML_DOC);
    } else if (req.url === '/private.json') {
      res.writeHead(401).end();
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

/** The create request body schema of /volumes in a loaded document. */
const createSchema = (document: unknown): unknown =>
  getPath(document, 'paths./volumes.post.requestBody.content.application/json.schema');

/** Runs a load that must fail and returns the TendError. */
async function failure(promise: Promise<unknown>): Promise<TendError> {
  try {
    await promise;
  } catch (e) {
    expect(e).toBeInstanceOf(TendError);
    return e as TendError;
  }
  throw new Error('expected the load to fail');
}

describe('loadOpenApiDocument', () => {
  it('reads a YAML file and dereferences its $refs', async () => {
    const doc = await loadOpenApiDocument(write('ok.yaml', YAML_DOC));
    expect(doc.version).toBe('3.0.3');
    expect(doc.warnings).toEqual([]);
    expect(createSchema(doc.document)).toEqual({
      type: 'object',
      properties: { size: { type: 'integer' } },
    });
  });

  it('reads a document over HTTP with the given headers', async () => {
    const doc = await loadOpenApiDocument(`${base}/openapi.yaml`, {
      headers: { 'X-API-Key': 'k-123' },
    });
    expect(doc.location).toBe(`${base}/openapi.yaml`);
    expect(seenHeaders.at(-1)).toEqual({ 'x-api-key': 'k-123' });
  });

  it('resolves external $refs relative to the file', async () => {
    write('volume.yaml', 'type: object\nproperties:\n  size: { type: integer }\n');
    const path = write(
      'split.yaml',
      YAML_DOC.replace("'#/components/schemas/Volume'", './volume.yaml'),
    );
    const doc = await loadOpenApiDocument(path);
    expect(getPath(createSchema(doc.document), 'properties')).toEqual({
      size: { type: 'integer' },
    });
  });

  it('turns a dangling $ref into a warning and an empty schema', async () => {
    const path = write('dangling.yaml', YAML_DOC.replace('schemas/Volume', 'schemas/Nope'));
    const doc = await loadOpenApiDocument(path);
    expect(doc.warnings).toEqual([
      '$ref #/components/schemas/Nope points at nothing; it is read as an empty schema',
    ]);
    expect(createSchema(doc.document)).toEqual({});
  });

  it('converts Swagger 2.0 and reads YAML merge keys', async () => {
    const path = write(
      'swagger.yaml',
      `swagger: '2.0'
info: { title: t, version: '1' }
basePath: /api/v1
paths:
  /volumes:
    post:
      parameters:
        - { name: body, in: body, required: true, schema: { $ref: '#/definitions/Volume' } }
      responses:
        '201': { description: ok, schema: { $ref: '#/definitions/Volume' } }
        <<: &errors
          '404': { description: gone, schema: { $ref: '#/definitions/Error' } }
    get:
      responses:
        '200': { description: ok, schema: { type: array, items: { $ref: '#/definitions/Volume' } } }
        <<: *errors
definitions:
  Volume:
    properties:
      size: { type: integer, x-tend-immutable: true }
  Error:
    properties: { error: { type: string } }
`,
    );
    const d = await loadOpenApiDocument(path);
    expect(d.version).toBe('3.0.0');
    expect(d.convertedFrom).toBe('swagger 2.0');
    expect(createSchema(d.document)).toMatchObject({
      properties: { size: { type: 'integer', 'x-tend-immutable': true } },
    });
    // The merge key brought the shared error responses into both operations.
    expect(getPath(d.document, 'paths./volumes.get.responses.404.description')).toBe('gone');
    expect(getPath(d.document, 'paths./volumes.post.responses.404.description')).toBe('gone');
  });

  it('applies an overlay to the document as written, and warns about targets that select nothing', async () => {
    const path = write('with-overlay.yaml', YAML_DOC);
    const overlay = write(
      'overlay.yaml',
      `overlay: 1.0.0
info: { title: o, version: '1' }
actions:
  - target: $.components.schemas.Volume.properties.size
    update: { x-tend-immutable: true }
  - target: $.components.schemas.Nothing
    description: a typo
    update: { x-tend-immutable: true }
`,
    );
    const d = await loadOpenApiDocument(path, { overlay });
    expect(d.overlay).toBe(overlay);
    expect(createSchema(d.document)).toMatchObject({
      properties: { size: { type: 'integer', 'x-tend-immutable': true } },
    });
    expect(d.warnings).toEqual([
      'overlay action 2 (a typo): target $.components.schemas.Nothing selects nothing in the document',
    ]);
  });

  it('warns about versions newer than 3.1 and documents without paths', async () => {
    const doc = await prepareOpenApiDocument({ openapi: '3.2.0' }, 'inline');
    expect(doc.warnings).toEqual([
      'openapi 3.2.0 is newer than 3.1; reading it as 3.1',
      'the document has no paths, so it offers no resource types',
    ]);
  });

  // Docker Engine's published swagger.yaml continues a quoted scalar on a line indented no deeper
  // than its key: not strict YAML, but what most OpenAPI tools read.
  const UNDER_INDENTED = `swagger: "2.0"
info: { title: t, version: "1" }
paths: {}
definitions:
  HostConfig:
    type: "object"
    properties:
      SecurityOpt:
        type: "array"
        description: "A list of string values to customize labels for MLS
        systems, such as SELinux."
        items:
          type: "string"
`;

  it('reads a document that is not strict YAML leniently, and says so in a warning', async () => {
    const path = write('under-indented.yaml', UNDER_INDENTED);
    const d = await loadOpenApiDocument(path);
    expect(
      getPath(d.document, 'components.schemas.HostConfig.properties.SecurityOpt.description'),
    ).toBe('A list of string values to customize labels for MLS systems, such as SELinux.');
    expect(d.warnings[0]).toMatch(
      new RegExp(
        `^${path}: not strict YAML \\(.+\\); read leniently, as most OpenAPI tools read it$`,
      ),
    );
  });

  it('readRawDocument: the same document as written (Swagger 2.0, not converted, $refs kept), read leniently too', async () => {
    const path = write('under-indented-raw.yaml', UNDER_INDENTED);
    const raw = await readRawDocument(path);
    expect(getPath(raw, 'definitions.HostConfig.properties.SecurityOpt.description')).toBe(
      'A list of string values to customize labels for MLS systems, such as SELinux.',
    );
    expect(getPath(raw, 'components')).toBeUndefined();
    await expect(readRawDocument(write('empty-raw.yaml', ' '))).rejects.toThrow(/is empty/);
  });

  it('gives a lenient read no more room than a strict one: alias bombs, duplicate keys, depth', async () => {
    const bomb = [
      UNDER_INDENTED,
      'x-a: &a ["x","x","x","x","x","x","x","x","x","x"]',
      ...Array.from({ length: 8 }, (_, i) => {
        const prev = i === 0 ? 'a' : `a${i}`;
        return `x-a${i + 1}: &a${i + 1} [${Array(10).fill(`*${prev}`).join(',')}]`;
      }),
    ].join('\n');
    const duplicate = UNDER_INDENTED + 'info: { title: again, version: "2" }\n';
    const deep = UNDER_INDENTED + 'x-deep: ' + '['.repeat(40) + ']'.repeat(40) + '\n';
    for (const [name, text] of [
      ['bomb.yaml', bomb],
      ['duplicate.yaml', duplicate],
      ['deep.yaml', deep],
    ] as const) {
      const path = write(name, text);
      await expect(
        loadOpenApiDocument(path, { limits: { maxAliasExpansion: 1000, maxDepth: 32 } }),
      ).rejects.toMatchObject({
        code: 'openapi.parse_failed',
        message: expect.stringMatching(new RegExp(`^${path} is neither JSON nor YAML`)) as unknown,
      });
    }
  });

  const errors: {
    name: string;
    reason: string;
    load: () => Promise<unknown>;
    code: string;
    message: () => string | RegExp;
  }[] = [
    {
      name: 'missing file',
      reason: 'says which file and where relative paths start',
      load: () => loadOpenApiDocument(join(dir, 'nope.yaml')),
      code: 'openapi.not_found',
      message: () =>
        `OpenAPI document ${join(dir, 'nope.yaml')} does not exist; check the provider's spec path (relative paths are resolved from the intent directory)`,
    },
    {
      name: 'a directory',
      reason: 'an unreadable path is not a crash',
      load: () => loadOpenApiDocument(dir),
      code: 'openapi.unreadable',
      message: () =>
        `cannot read OpenAPI document ${dir} (EISDIR); check that it is a readable file`,
    },
    {
      name: 'neither JSON nor YAML',
      reason: 'a parse error names the file',
      load: () => loadOpenApiDocument(write('bad.yaml', 'openapi: [3.1\n  : :')),
      code: 'openapi.parse_failed',
      message: () =>
        new RegExp(
          `^${join(dir, 'bad.yaml')} is neither JSON nor YAML \\(.+\\); fix the document or point spec at the right file$`,
        ),
    },
    {
      name: 'empty file',
      reason: 'an empty document is named as such',
      load: () => loadOpenApiDocument(write('empty.yaml', '\n')),
      code: 'openapi.parse_failed',
      message: () =>
        `${join(dir, 'empty.yaml')} is empty; point the provider's spec at an OpenAPI document`,
    },
    {
      name: 'not a mapping',
      reason: 'a YAML list is not a document',
      load: () => loadOpenApiDocument(write('list.yaml', '- a\n- b\n')),
      code: 'openapi.not_openapi',
      message: () =>
        `${join(dir, 'list.yaml')} is not an OpenAPI document (it is not a mapping); point the provider's spec at an OpenAPI 3.0 or 3.1 document`,
    },
    {
      name: 'no openapi field',
      reason: 'some other YAML file',
      load: () => loadOpenApiDocument(write('other.yaml', 'name: x\n')),
      code: 'openapi.not_openapi',
      message: () =>
        `${join(dir, 'other.yaml')} has no \`openapi\` field; point the provider's spec at an OpenAPI 3.0 or 3.1 (or Swagger 2.0) document`,
    },
    {
      name: 'OpenAPI 4',
      reason: 'only 3.x is read',
      load: () => prepareOpenApiDocument({ openapi: '4.0.0' }, 'inline'),
      code: 'openapi.not_openapi',
      message: () =>
        "inline declares openapi 4.0.0; point the provider's spec at an OpenAPI 3.0 or 3.1 (or Swagger 2.0) document",
    },
    {
      name: 'Swagger 1.2',
      reason: 'only Swagger 2.0 is converted',
      load: () => prepareOpenApiDocument({ swagger: '1.2', paths: {} }, 'inline'),
      code: 'openapi.swagger_unsupported',
      message: () =>
        'inline is a Swagger 1.2 document; Tend reads Swagger 2.0 and OpenAPI 3.0 and 3.1',
    },
    {
      name: 'overlay missing',
      reason: 'the overlay path is checked like the spec path',
      load: () =>
        loadOpenApiDocument(write('o.yaml', YAML_DOC), { overlay: join(dir, 'nope.yaml') }),
      code: 'overlay.not_found',
      message: () =>
        `overlay ${join(dir, 'nope.yaml')} does not exist; check the provider's overlay path (relative paths are resolved from the intent directory)`,
    },
    {
      name: 'overlay not an overlay',
      reason: 'an OpenAPI document given as overlay is refused with what is missing',
      load: () =>
        loadOpenApiDocument(write('o2.yaml', YAML_DOC), { overlay: write('o2-ov.yaml', YAML_DOC) }),
      code: 'overlay.invalid',
      message: () =>
        `${join(dir, 'o2-ov.yaml')} is not an OpenAPI Overlay 1.0 document: it has no \`overlay: 1.0.0\` field; see docs/onboard-rest-api.md`,
    },
    {
      name: 'overlay unparsable',
      reason: 'YAML errors in the overlay name the overlay',
      load: () =>
        loadOpenApiDocument(write('o3.yaml', YAML_DOC), {
          overlay: write('o3-ov.yaml', 'actions: [\n'),
        }),
      code: 'overlay.parse_failed',
      message: () => new RegExp(`^${join(dir, 'o3-ov.yaml')} is neither JSON nor YAML`),
    },
    {
      name: 'HTTP 404',
      reason: 'the status is named',
      load: () => loadOpenApiDocument(`${base}/missing.json`),
      code: 'openapi.fetch_failed',
      message: () => `cannot fetch OpenAPI document ${base}/missing.json: HTTP 404; check the URL`,
    },
    {
      name: 'HTTP 401 with credentials in the URL',
      reason: 'credentials in a URL never reach a message; the hint points at auth',
      load: () =>
        loadOpenApiDocument(`http://user:s3cret@127.0.0.1:${new URL(base).port}/private.json`),
      code: 'openapi.fetch_failed',
      message: () =>
        `cannot fetch OpenAPI document ${base}/private.json: HTTP 401; the server wants credentials: check the provider auth`,
    },
    {
      name: 'connection refused',
      reason: 'a server that is down is named, retryable',
      load: () =>
        loadOpenApiDocument('http://127.0.0.1:9/openapi.json', {
          fetch: () =>
            Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })),
        }),
      code: 'openapi.fetch_failed',
      message: () =>
        'cannot fetch OpenAPI document http://127.0.0.1:9/openapi.json (ECONNREFUSED); check that the URL is right and the server is up',
    },
  ];

  it.each(errors)('fails on $name: $reason', async ({ load, code, message: want }) => {
    const e = await failure(load());
    expect(e.code).toBe(code);
    const message = want();
    if (typeof message === 'string') expect(e.message).toBe(message);
    else expect(e.message).toMatch(message);
    expect(e.message).not.toContain('s3cret');
    expect(e.phase).toBe('load');
  });
});
