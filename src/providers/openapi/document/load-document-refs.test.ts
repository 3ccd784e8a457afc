import type * as FsPromises from 'node:fs/promises';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { TendError, getPath } from '../../../core/index.js';
import { loadOpenApiDocument } from './load-document.js';

// Issue 10, item 2: a document's $refs reach only what its origin allows, and reading a document
// is bounded (size, depth, $refs, YAML aliases). "Never read" is proven twice: every path the
// loader hands to the file system is recorded (node:fs/promises is wrapped below), and the secret's
// content appears in no message, warning or loaded document.

const touched = vi.hoisted(() => [] as string[]);
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof FsPromises>();
  const record =
    <A extends unknown[], R>(name: string, f: (...args: A) => R) =>
    (...args: A): R => {
      touched.push(`${name} ${String(args[0])}`);
      return f(...args);
    };
  const wrapped = {
    ...real,
    open: record('open', real.open),
    readFile: record('readFile', real.readFile),
    realpath: record('realpath', real.realpath),
    stat: record('stat', real.stat),
    lstat: record('lstat', real.lstat),
  };
  return { ...wrapped, default: wrapped };
});

const SECRET = 'TOPSECRET-7f3a9c';
const root = mkdtempSync(join(tmpdir(), 'tend-refs-'));
/** A file outside the spec directory whose content must never be read. */
const secretPath = join(root, 'secret.txt');
const specDir = join(root, 'intent', 'specs');
const outsideDir = join(root, 'elsewhere');

const write = (path: string, text: string): string => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
};

/** A document whose create body of /volumes is `schema` (YAML flow syntax). */
const spec = (schema: string, extra = ''): string => `
openapi: 3.0.3
info: { title: t, version: '1' }
paths:
  /volumes:
    post:
      requestBody:
        content:
          application/json:
            schema: ${schema}
      responses: { '201': { description: ok } }
${extra}`;

const createSchema = (document: unknown): unknown =>
  getPath(document, 'paths./volumes.post.requestBody.content.application/json.schema');

async function failure(promise: Promise<unknown>): Promise<TendError> {
  try {
    await promise;
  } catch (e) {
    expect(e).toBeInstanceOf(TendError);
    return e as TendError;
  }
  throw new Error('expected the load to fail');
}

/** Nothing about the secret anywhere: not its content in the outcome, not its path in any fs call. */
function expectSecretUntouched(outcome: unknown): void {
  const text =
    outcome instanceof Error
      ? `${outcome.message} ${String((outcome as TendError).hint)}`
      : JSON.stringify(outcome);
  expect(text).not.toContain(SECRET);
  expect(touched.filter((p) => p.includes('secret'))).toEqual([]);
}

let server: ReturnType<typeof createServer>;
let other: ReturnType<typeof createServer>;
let base = '';
let otherBase = '';
const served: string[] = [];
const otherServed: string[] = [];

beforeAll(async () => {
  write(secretPath, `${SECRET}\n`);
  write(join(outsideDir, 'secret-schema.yaml'), `type: object\ndescription: ${SECRET}\n`);
  const routes: Record<string, string> = {
    '/api/openapi.yaml': spec("{ $ref: './schemas/volume.yaml' }"),
    '/api/schemas/volume.yaml':
      "type: object\nproperties:\n  size: { $ref: '../common.yaml#/Size' }\n",
    '/api/common.yaml': 'Size: { type: integer, minimum: 1 }\n',
    '/api/passwd.yaml': spec("{ $ref: 'file:///etc/passwd' }"),
    '/api/cross.yaml': spec('{ $ref: "OTHER/schema.yaml" }'),
    '/api/big.json': JSON.stringify({ openapi: '3.0.3', pad: 'x'.repeat(4000) }),
  };
  server = createServer((req, res) => {
    served.push(req.url ?? '');
    let body = routes[req.url ?? ''];
    if (body === undefined) return void res.writeHead(404).end();
    body = body.replace('OTHER', otherBase);
    if (req.url === '/api/big.json') {
      // No content-length: the cap must hold while streaming.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(body.slice(0, 2000));
      res.end(body.slice(2000));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/yaml' }).end(body);
  });
  other = createServer((req, res) => {
    otherServed.push(req.url ?? '');
    res.writeHead(200).end(`type: object\ndescription: ${SECRET}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  otherBase = `http://localhost:${(other.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await new Promise<void>((resolve) => other.close(() => resolve()));
  rmSync(root, { recursive: true, force: true });
});

beforeEach(() => {
  touched.length = 0;
});

describe('$refs of a local document', () => {
  it('refuses ../../secret.txt (outside the directory) before reading anything it names', async () => {
    const path = write(join(specDir, 'escape.yaml'), spec("{ $ref: '../../secret.txt' }"));
    const e = await failure(loadOpenApiDocument(path));
    expect(e.code).toBe('openapi.ref_refused');
    expect(e.message).toBe(
      `$ref ../../secret.txt in ${path} points outside that directory; a local document's $refs may only name files inside its own directory ${specDir}`,
    );
    expect(e.hint).toMatch(/bundle the document/);
    expectSecretUntouched(e);
  });

  it.each([
    ['an absolute path', () => secretPath],
    ['a file: URL', () => pathToFileURL(secretPath).href],
    ['an http URL', () => `${base}/api/common.yaml`],
  ])('refuses %s', async (_name, ref) => {
    const path = write(join(specDir, 'abs.yaml'), spec(`{ $ref: '${ref()}#/x' }`));
    const e = await failure(loadOpenApiDocument(path));
    expect(e.code).toBe('openapi.ref_refused');
    expectSecretUntouched(e);
  });

  it('refuses a symbolic link inside the directory that leads outside it', async () => {
    const link = join(specDir, 'linked.yaml');
    rmSync(link, { force: true });
    symlinkSync(join(outsideDir, 'secret-schema.yaml'), link);
    const path = write(join(specDir, 'via-link.yaml'), spec("{ $ref: './linked.yaml' }"));
    const e = await failure(loadOpenApiDocument(path));
    expect(e.code).toBe('openapi.ref_refused');
    expect(e.message).toContain('through a symbolic link');
    // The link was resolved (realpath), never opened.
    expect(touched).toContain(`realpath ${link}`);
    expect(touched.filter((t) => t.startsWith('open ') && /linked|secret/.test(t))).toEqual([]);
    expect(e.message).not.toContain(SECRET);
  });

  it('refuses a $ref in a referenced file that leaves the directory, before reading its targets', async () => {
    write(
      join(specDir, 'parts', 'hop.yaml'),
      "type: object\nallOf: [{ $ref: '../../../secret.txt' }]\n",
    );
    const path = write(join(specDir, 'hop.yaml'), spec("{ $ref: './parts/hop.yaml' }"));
    const e = await failure(loadOpenApiDocument(path));
    expect(e.code).toBe('openapi.ref_refused');
    expect(e.message).toContain(`in ${join(specDir, 'parts', 'hop.yaml')}`);
    expectSecretUntouched(e);
  });

  it('resolves $refs to files in its directory tree, between them and back into the document', async () => {
    write(
      join(specDir, 'schemas', 'volume.yaml'),
      [
        'Volume:',
        '  type: object',
        '  properties:',
        "    size: { $ref: '../common/types.json#/Size' }",
        "    owner: { $ref: '../tree.yaml#/components/schemas/Owner' }",
        "    self: { $ref: '#/Volume' }",
      ].join('\n'),
    );
    write(join(specDir, 'common', 'types.json'), JSON.stringify({ Size: { type: 'integer' } }));
    const path = write(
      join(specDir, 'tree.yaml'),
      spec(
        "{ $ref: 'schemas/volume.yaml#/Volume' }",
        'components:\n  schemas:\n    Owner: { type: string }\n',
      ),
    );
    const doc = await loadOpenApiDocument(path);
    expect(doc.warnings).toEqual([]);
    const schema = createSchema(doc.document) as Record<string, unknown>;
    expect(getPath(schema, 'properties.size')).toEqual({ type: 'integer' });
    expect(getPath(schema, 'properties.owner')).toEqual({ type: 'string' });
    // A recursive schema in a referenced file is a cycle, as it is within one document.
    expect(getPath(schema, 'properties.self')).toBe(schema);
    // The bundle used to dereference is gone from what is returned.
    expect(doc.document['x-tend-bundled']).toBeUndefined();
  });

  it('reads a missing file or a pointer to nothing as an empty schema, with a warning', async () => {
    write(join(specDir, 'small.yaml'), 'A: { type: string }\n');
    const path = write(
      join(specDir, 'holes.yaml'),
      spec(
        "{ type: object, properties: { a: { $ref: './nope.yaml' }, b: { $ref: './small.yaml#/B' } } }",
      ),
    );
    const doc = await loadOpenApiDocument(path);
    expect(doc.warnings).toEqual([
      `$ref ./nope.yaml: ${join(specDir, 'nope.yaml')} does not exist; it is read as an empty schema`,
      '$ref ./small.yaml#/B points at nothing; it is read as an empty schema',
    ]);
    expect(getPath(createSchema(doc.document), 'properties')).toEqual({ a: {}, b: {} });
  });
});

describe('$refs of a document fetched over HTTP', () => {
  it('resolves relative $refs on its own origin, with its headers', async () => {
    served.length = 0;
    const doc = await loadOpenApiDocument(`${base}/api/openapi.yaml`, {
      headers: { 'X-API-Key': 'k' },
    });
    expect(doc.warnings).toEqual([]);
    expect(getPath(createSchema(doc.document), 'properties.size')).toEqual({
      type: 'integer',
      minimum: 1,
    });
    expect(served).toEqual(['/api/openapi.yaml', '/api/schemas/volume.yaml', '/api/common.yaml']);
    expect(touched).toEqual([]);
  });

  it('refuses file:///etc/passwd without touching the file system', async () => {
    const e = await failure(loadOpenApiDocument(`${base}/api/passwd.yaml`));
    expect(e.code).toBe('openapi.ref_refused');
    expect(e.message).toBe(
      `$ref file:///etc/passwd in ${base}/api/passwd.yaml is a file: URL; a document fetched over HTTP may only refer to http(s) URLs on its own origin ${base}`,
    );
    expect(e.hint).toMatch(/bundle the document/);
    expect(touched).toEqual([]);
    expect(e.message).not.toContain('root:');
  });

  it('refuses a $ref to another origin without sending it anything', async () => {
    otherServed.length = 0;
    const e = await failure(loadOpenApiDocument(`${base}/api/cross.yaml`));
    expect(e.code).toBe('openapi.ref_refused');
    expect(e.message).toContain(`is on another origin (${otherBase})`);
    expect(otherServed).toEqual([]);
  });
});

describe('bounds', () => {
  it('fails on a YAML alias bomb within a second, naming where', async () => {
    const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++)
      lines.push(
        `a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    const path = write(
      join(specDir, 'bomb.yaml'),
      spec('{ type: object }', `x-bomb:\n  ${lines.join('\n  ')}\n`),
    );
    const started = performance.now();
    const e = await failure(loadOpenApiDocument(path));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(e.code).toBe('openapi.limit_exceeded');
    expect(e.message).toMatch(
      new RegExp(
        `^${path}:\\d+:\\d+: the document is refused: its aliases expand it by more than 1,000,000 values`,
      ),
    );
  });

  it('reads many aliases of an anchor quickly (the yaml package bounds them in quadratic time)', async () => {
    const lines = ['a: &a []', `b: &b [${Array(200).fill('*a').join(', ')}]`];
    lines.push(`c: [${Array(200).fill('*b').join(', ')}]`, 'pad:');
    for (let i = 0; i < 4_000; i++) lines.push(`  - ${i}`);
    const path = write(
      join(specDir, 'aliases.yaml'),
      spec('{ type: object }', `x-many:\n  ${lines.join('\n  ')}\n`),
    );
    const started = performance.now();
    const doc = await loadOpenApiDocument(path);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(doc.version).toBe('3.0.3');
  });

  it('refuses a recursive YAML alias', async () => {
    const path = write(
      join(specDir, 'loop.yaml'),
      spec('&s { type: object, properties: { again: *s } }'),
    );
    const e = await failure(loadOpenApiDocument(path));
    expect(e.code).toBe('openapi.limit_exceeded');
    expect(e.message).toContain('alias *s is inside the value it names');
  });

  it.each([
    [
      'JSON',
      'deep.json',
      (n: number) => `{"openapi":"3.0.3","x":${'['.repeat(n)}${']'.repeat(n)}}`,
    ],
    ['YAML', 'deep.yaml', (n: number) => `openapi: 3.0.3\nx: ${'['.repeat(n)}${']'.repeat(n)}\n`],
  ])(
    'refuses %s nested deeper than the bound, without overflowing the stack',
    async (_n, name, text) => {
      for (const n of [300, 20_000]) {
        const e = await failure(loadOpenApiDocument(write(join(specDir, name), text(n))));
        expect(e.code).toBe('openapi.limit_exceeded');
        expect(e.message).toMatch(/nested (more than 256 levels deep|too deeply to read)/);
      }
    },
  );

  it('refuses a document larger than the bound, read from a file or streamed over HTTP', async () => {
    const path = write(
      join(specDir, 'large.json'),
      JSON.stringify({ openapi: '3.0.3', pad: 'x'.repeat(4000) }),
    );
    const fromFile = await failure(loadOpenApiDocument(path, { limits: { maxBytes: 1000 } }));
    expect(fromFile.code).toBe('openapi.limit_exceeded');
    expect(fromFile.message).toBe(
      `${path} is larger than 1 KiB (with the files its $refs name); Tend reads OpenAPI documents up to that size`,
    );
    const fromUrl = await failure(
      loadOpenApiDocument(`${base}/api/big.json`, { limits: { maxBytes: 1000 } }),
    );
    expect(fromUrl.code).toBe('openapi.limit_exceeded');
  });

  it('counts the bytes of referenced files against the same bound', async () => {
    write(
      join(specDir, 'bulky.json'),
      JSON.stringify({ type: 'object', description: 'x'.repeat(3000) }),
    );
    const path = write(join(specDir, 'bulky-root.yaml'), spec("{ $ref: './bulky.json' }"));
    await expect(
      loadOpenApiDocument(path, { limits: { maxBytes: 10_000 } }),
    ).resolves.toBeDefined();
    const e = await failure(loadOpenApiDocument(path, { limits: { maxBytes: 3000 } }));
    expect(e.code).toBe('openapi.limit_exceeded');
    expect(e.message).toMatch(new RegExp(`^${path} is larger than 2.9 KiB`));
  });

  it('refuses more $refs than the bound', async () => {
    const path = write(
      join(specDir, 'refs.yaml'),
      spec(
        "{ type: object, properties: { a: { $ref: '#/components/schemas/S' }, b: { $ref: '#/components/schemas/S' } } }",
        'components:\n  schemas:\n    S: { type: string }\n',
      ),
    );
    const e = await failure(loadOpenApiDocument(path, { limits: { maxRefs: 1 } }));
    expect(e.code).toBe('openapi.limit_exceeded');
    expect(e.message).toContain('more than 1 $refs');
  });

  it('finds duplicate keys itself (the yaml package takes time quadratic in a mapping)', async () => {
    const keys = Array.from({ length: 100 }, (_, i) => `  k${i}: { type: string }`);
    keys.push('  k7: { type: integer }');
    const path = write(
      join(specDir, 'dup.yaml'),
      spec('{ type: object }', `x-keys:\n${keys.join('\n')}\n`),
    );
    const e = await failure(loadOpenApiDocument(path));
    expect(e.code).toBe('openapi.parse_failed');
    // The wording is Tend's (the package's own check, if it ran, would answer first, without the key).
    expect(e.message).toMatch(
      /neither JSON nor YAML \(Map keys must be unique: `k7` is already a key of this mapping at line \d+, column 3\)/,
    );
  });

  it('copies a `__proto__` key as a plain key, without touching any prototype', async () => {
    const path = write(
      join(specDir, 'proto.json'),
      '{"openapi":"3.0.3","paths":{},"x-data":{"__proto__":{"polluted":true}}}',
    );
    const doc = await loadOpenApiDocument(path);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    const data = doc.document['x-data'] as object;
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect(Object.keys(data)).toEqual(['__proto__']);
  });
});
