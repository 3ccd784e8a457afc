// A platform that never ends its answer (test/e2e/endless-answer.test.ts, fleet-endless.test.ts):
// the OpenAPI document of its one type, `items`, and a handler that answers its list with `200`, `[`
// and then entries forever.
import type { IncomingMessage, ServerResponse } from 'node:http';

const ITEM = {
  type: 'object',
  required: ['name'],
  properties: { id: { type: 'string', readOnly: true }, name: { type: 'string' } },
};
const ref = { $ref: '#/components/schemas/Item' };
const idParam = [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }];
export const DOCUMENT = {
  openapi: '3.0.0',
  info: { title: 'flood', version: '1' },
  paths: {
    '/items': {
      get: {
        responses: {
          '200': {
            description: 'items',
            content: { 'application/json': { schema: { type: 'array', items: ref } } },
          },
        },
      },
      post: {
        requestBody: { content: { 'application/json': { schema: ref } } },
        responses: {
          '201': { description: 'created', content: { 'application/json': { schema: ref } } },
        },
      },
    },
    '/items/{id}': {
      get: {
        parameters: idParam,
        responses: {
          '200': { description: 'item', content: { 'application/json': { schema: ref } } },
        },
      },
      delete: { parameters: idParam, responses: { '204': { description: 'gone' } } },
    },
  },
  components: { schemas: { Item: ITEM } },
};

/** 64 KiB of `{"id":n},` entries, written again and again. */
export const BLOCK = (() => {
  let text = '';
  for (let n = 0; text.length < 64 * 1024; n++) text += `{"id":"${n}","name":"item-${n}"},`;
  return Buffer.from(text);
})();

export interface Seen {
  readonly userAgent: string | undefined;
  /** Bytes written before the connection closed; undefined while it is open. */
  closedAfter?: number;
}

/** `200`, `[` and then entries forever, as fast as the socket takes them, until it closes. */
export function flood(seen: Seen[], req: IncomingMessage, res: ServerResponse): void {
  const s: Seen = { userAgent: req.headers['user-agent'] };
  seen.push(s);
  res.writeHead(200, { 'content-type': 'application/json' });
  let written = 0;
  let open = true;
  res.on('close', () => {
    open = false;
    s.closedAfter = written;
  });
  const more = () => {
    while (open) {
      written += BLOCK.length;
      if (!res.write(BLOCK)) return void res.once('drain', more);
    }
  };
  res.write('[');
  more();
}
