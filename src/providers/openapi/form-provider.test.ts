import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import qs from 'qs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WriteContext } from '../../core/index.js';
import { TendError } from '../../core/index.js';
import { prepareOpenApiDocument } from './document/load-document.js';
import type { OpenApiProvider } from './openapi-provider.js';
import { createOpenApiProvider } from './openapi-provider.js';

// A Stripe-like platform on 127.0.0.1: every write is a form, the item path's POST updates (taking
// fewer fields than the create), and prices cannot be deleted. The provider creates, updates and
// refuses to delete, and the server sees exactly the forms Tend means.

const FORM = 'application/x-www-form-urlencoded';
const METADATA = {
  anyOf: [
    { type: 'object', additionalProperties: { type: 'string' } },
    { type: 'string', enum: [''] },
  ],
};
const PRICE = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    currency: { type: 'string' },
    unit_amount: { type: 'integer' },
    nickname: { type: 'string' },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
  },
};
const ok = (schema: unknown) => ({
  '200': { description: 'ok', content: { 'application/json': { schema } } },
});
const form = (schema: unknown) => ({ requestBody: { content: { [FORM]: { schema } } } });
const document = {
  openapi: '3.0.0',
  info: { title: 'stripe-like', version: '1' },
  paths: {
    '/v1/prices': {
      get: {
        responses: ok({ type: 'object', properties: { data: { type: 'array', items: PRICE } } }),
      },
      post: {
        ...form({
          type: 'object',
          required: ['currency'],
          properties: {
            currency: { type: 'string' },
            unit_amount: { type: 'integer' },
            nickname: { type: 'string' },
            metadata: METADATA,
          },
        }),
        responses: ok(PRICE),
      },
    },
    '/v1/prices/{price}': {
      get: { responses: ok(PRICE) },
      post: {
        ...form({
          type: 'object',
          properties: { nickname: { type: 'string' }, metadata: METADATA },
        }),
        responses: ok(PRICE),
      },
    },
  },
};

interface Seen {
  method: string;
  url: string;
  contentType: string | undefined;
  raw: string;
}
const seen: Seen[] = [];
const prices = new Map<string, Record<string, unknown>>();
const server = createServer((req, res) => {
  let raw = '';
  req.on('data', (c: Buffer) => (raw += c.toString()));
  req.on('end', () => {
    seen.push({
      method: req.method!,
      url: req.url!,
      contentType: req.headers['content-type'],
      raw,
    });
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const body = qs.parse(raw) as Record<string, unknown>;
    const id = /^\/v1\/prices\/([^/]+)$/.exec(req.url!)?.[1];
    if (req.method === 'GET' && req.url === '/v1/prices')
      return send(200, { data: [...prices.values()] });
    if (req.method === 'POST' && req.url === '/v1/prices') {
      const price = {
        id: `price_${prices.size + 1}`,
        ...body,
        unit_amount: Number(body['unit_amount']),
      };
      prices.set(price.id, price);
      return send(200, price);
    }
    const price = id === undefined ? undefined : prices.get(id);
    if (price === undefined) return send(404, { error: { message: 'No such price' } });
    if (req.method === 'GET') return send(200, price);
    if (req.method === 'POST') {
      const unknown = Object.keys(body).filter((k) => k !== 'nickname' && k !== 'metadata');
      if (unknown.length > 0) {
        return send(400, { error: { message: `Received unknown parameter: ${unknown[0]}` } });
      }
      Object.assign(price, body);
      return send(200, price);
    }
    return send(405, { error: { message: 'Unrecognized request URL' } });
  });
});

let provider: OpenApiProvider;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  provider = createOpenApiProvider({
    name: 'stripe',
    document: await prepareOpenApiDocument(document, 'inline'),
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    workspace: 'ws',
  });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('a form-encoded API without DELETE (real server)', () => {
  const ctx: WriteContext = {
    actor: { actor: 'tend' },
    marker: { workspace: 'ws', address: 'stripe.prices/basic', op: 'op-1' },
  };

  it('describes the type: marker in metadata, update by POST, no delete', () => {
    const info = provider.describe().types.find((t) => t.name === 'prices');
    expect(info).toMatchObject({
      identity: 'marker',
      markerField: 'metadata',
      markerKind: 'map',
      noDelete: 'no DELETE on /v1/prices/{price}',
      createOnly: ['currency', 'unit_amount'],
    });
  });

  it('creates with a form carrying the marker in brackets', async () => {
    seen.length = 0;
    const created = await provider.create(
      'prices',
      { currency: 'eur', unit_amount: 1200, nickname: 'Basic & more' },
      ctx,
    );
    expect(created.id).toBe('price_1');
    expect(created.marker).toEqual(ctx.marker);
    const post = seen.find((s) => s.method === 'POST')!;
    expect(post.contentType).toBe(FORM);
    expect(post.raw).toBe(
      'currency=eur&unit_amount=1200&nickname=Basic%20%26%20more&metadata[tend.workspace]=ws&metadata[tend.address]=stripe.prices%2Fbasic&metadata[tend.op]=op-1',
    );
  });

  it('updates by POST on the item path with only the fields that update takes', async () => {
    seen.length = 0;
    const current = (await provider.read('prices', 'price_1'))!;
    const updated = await provider.update(
      'prices',
      'price_1',
      { currency: 'eur', unit_amount: 1200, nickname: 'Basic' },
      current,
      ctx,
    );
    expect(updated.fields['nickname']).toBe('Basic');
    const post = seen.find((s) => s.method === 'POST')!;
    expect(post.url).toBe('/v1/prices/price_1');
    // currency and unit_amount are create-only (the update does not take them): never sent; the
    // marker is already on the object, so a merge leaves it alone.
    expect(post.raw).toBe('nickname=Basic');
  });

  it('refuses to delete, sending nothing, and says what to do', async () => {
    seen.length = 0;
    let err: unknown;
    try {
      await provider.delete('prices', 'price_1', { actor: { actor: 'tend' } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TendError);
    expect((err as TendError).code).toBe('provider.no_delete');
    expect((err as TendError).message).toBe(
      'the API offers no DELETE for prices (no DELETE on /v1/prices/{price}): Tend cannot delete prices objects; remove the object in the platform, or keep it in the intent',
    );
    expect(seen).toEqual([]);
  });
});
