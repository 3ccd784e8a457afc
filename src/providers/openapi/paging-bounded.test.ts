import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RecordingServer } from '../../../test/support/recording-server.js';
import { json, startRecordingServer } from '../../../test/support/recording-server.js';
import { TendError } from '../../core/index.js';
import { prepareOpenApiDocument } from './document/load-document.js';
import { createOpenApiProvider } from './openapi-provider.js';

// maxResponseBytes bounds each answer, not a list: a list read page by page may hold more than the
// limit in all, as long as every page is within it; one page past it fails the list, naming the
// provider (decision 0040). Against a real HTTP server on 127.0.0.1.

const THING = {
  type: 'object',
  required: ['name'],
  properties: { id: { type: 'string', readOnly: true }, name: { type: 'string' } },
};
const body = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  paths: {
    '/things': {
      get: {
        parameters: [
          { name: 'page', in: 'query', schema: { type: 'integer' } },
          { name: 'per_page', in: 'query', schema: { type: 'integer', maximum: 10 } },
        ],
        responses: { '200': { description: 'ok', ...body({ type: 'array', items: THING }) } },
      },
      post: {
        requestBody: body(THING),
        responses: { '201': { description: 'ok', ...body(THING) } },
      },
    },
    '/things/{id}': {
      get: { responses: { '200': { description: 'ok', ...body(THING) } } },
      delete: { responses: { '204': { description: 'gone' } } },
    },
  },
};

/** Ten things of about 100 bytes each: a page of about 1,000 bytes. */
const page = (n: number) =>
  Array.from({ length: 10 }, (_, i) => ({ id: `t${n * 10 + i}`, name: 'x'.repeat(80) }));

let server: RecordingServer;
beforeAll(async () => {
  server = await startRecordingServer();
});
afterAll(async () => {
  await server.stop();
});
beforeEach(() => server.clear());

async function provider(maxResponseBytes: number) {
  return createOpenApiProvider({
    name: 'paged',
    document: await prepareOpenApiDocument(DOCUMENT, 'inline'),
    endpoint: `${server.url}/api`,
    workspace: 'ws',
    maxAttempts: 1,
    maxResponseBytes,
  });
}

describe('a paginated list under maxResponseBytes', () => {
  it('is read whole when every page is within the limit, however large the list', async () => {
    server.handle((req, res) => {
      const n = Number(new URL(req.url, 'http://x').searchParams.get('page'));
      json(res, 200, n <= 5 ? page(n - 1) : []);
    });
    const bytesOfPage = Buffer.byteLength(JSON.stringify(page(0)));
    const limit = bytesOfPage + 10;
    // The list as a whole is five times the limit.
    expect(5 * bytesOfPage).toBeGreaterThan(4 * limit);
    const listed = await (await provider(limit)).list('things');
    expect(listed).toHaveLength(50);
  });

  it('fails when one page passes the limit, naming the provider', async () => {
    server.handle((req, res) => {
      const n = Number(new URL(req.url, 'http://x').searchParams.get('page'));
      json(res, 200, n === 2 ? [...page(1), ...page(2)] : n <= 3 ? page(n - 1) : []);
    });
    const bytesOfPage = Buffer.byteLength(JSON.stringify(page(0)));
    const e = await (await provider(bytesOfPage + 10)).list('things').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(TendError);
    expect((e as TendError).code).toBe('provider.response_too_large');
    expect((e as TendError).message).toMatch(
      /^provider paged: GET \/things: the answer \(status 200\) is larger than maxResponseBytes/,
    );
  });
});
