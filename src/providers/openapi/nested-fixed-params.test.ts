import { describe, expect, it } from 'vitest';
import { prepareOpenApiDocument } from './document/load-document.js';
import { createOpenApiProvider } from './openapi-provider.js';

// A nested type whose path has a fixed parameter below its parent
// (`/flags/{flag}/envs/{env}/strategies`, `env` fixed by x-tend-parent-values, as Unleash's
// environments are): its objects are listed, read and written under the fixed value.

const object = {
  type: 'object',
  properties: { id: { type: 'string' }, title: { type: 'string' } },
};
const json = { 'application/json': { schema: object } };
const ok = { 200: { description: 'ok', content: json } };
const pair = (collection: string, param: string) => ({
  [collection]: {
    get: { responses: { 200: { description: 'ok' } } },
    post: { requestBody: { content: json }, responses: ok },
  },
  [`${collection}/{${param}}`]: {
    get: { responses: ok },
    delete: { responses: { 204: { description: 'gone' } } },
  },
});

describe('nested types with a fixed parameter below the parent', () => {
  it("lists each parent's objects under the fixed value", async () => {
    const document = await prepareOpenApiDocument(
      {
        openapi: '3.0.3',
        info: { title: 'flags', version: '1' },
        'x-tend-parent-values': { env: 'dev' },
        paths: { ...pair('/flags', 'flag'), ...pair('/flags/{flag}/envs/{env}/strategies', 'sid') },
      },
      'flags.json',
    );
    const seen: string[] = [];
    const answers: Record<string, unknown> = {
      '/flags': [{ id: 'a/b', title: 'A' }],
      '/flags/a%2Fb/envs/dev/strategies': [{ id: 's1', title: 'half' }],
    };
    const p = createOpenApiProvider({
      name: 'f',
      document,
      endpoint: 'http://127.0.0.1:1',
      workspace: 'ws',
      fetch: (input) => {
        const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
        seen.push(path);
        const body = answers[path];
        return Promise.resolve(
          new Response(JSON.stringify(body ?? { message: 'not found' }), {
            status: body === undefined ? 404 : 200,
            headers: { 'content-type': 'application/json' },
          }),
        );
      },
    });
    const listed = await p.list('strategies');
    expect(listed.map((o) => [o.id, o.fields['title']])).toEqual([['a%2Fb/s1', 'half']]);
    expect(seen).toEqual(['/flags', '/flags/a%2Fb/envs/dev/strategies']);
  });
});
