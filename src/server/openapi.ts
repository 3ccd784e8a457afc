import type { Route, Schema } from './routes.js';

const errorSchema: Schema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        hint: { type: 'string' },
        errors: { type: 'array', items: { type: 'string' } },
      },
    },
  },
};

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/** The path parameters of an OpenAPI path (`{address}`). */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}

/**
 * The OpenAPI 3.1 document of the API, made from the same route table (and the same JSON Schemas)
 * that route and validate the requests. It declares Tend's own lifecycle endpoint
 * (`x-tend-lifecycle`), so that Tend's OpenAPI provider can manage this API like any other.
 */
export function openApiDocument(
  routes: readonly Route[],
  version: string,
): Record<string, unknown> {
  const paths = new Map<string, Map<string, unknown>>();
  for (const r of routes) {
    const parameters: unknown[] = pathParams(r.path).map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const q = r.query?.['properties'] as Record<string, Schema> | undefined;
    for (const [name, schema] of Object.entries(q ?? {})) {
      parameters.push({ name, in: 'query', required: false, schema });
    }
    const status = String(r.status ?? 200);
    const op: Record<string, unknown> = {
      operationId: r.operationId,
      summary: r.summary,
      ...(r.role === 'public' ? { security: [] } : { 'x-tend-role': r.role }),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(r.body
        ? {
            requestBody: {
              required: r.method === 'post',
              content: { 'application/json': { schema: r.body } },
            },
          }
        : {}),
      responses: {
        [status]: {
          description: 'success',
          content: { [r.produces ?? 'application/json']: { schema: r.response } },
        },
        ...(r.body || r.query || parameters.length > 0
          ? { '400': errorResponse('invalid input: what is wrong, where') }
          : {}),
        ...(r.role === 'public'
          ? {}
          : {
              '401': errorResponse('no token, or an unknown one'),
              '403': errorResponse('the token’s role is too low'),
            }),
        ...(r.method !== 'get'
          ? { '409': errorResponse('the workspace lease is held by another writer') }
          : {}),
        default: errorResponse('an error'),
      },
    };
    const item = paths.get(r.path) ?? new Map<string, unknown>();
    paths.set(r.path, item.set(r.method, op));
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tend API',
      version,
      description:
        'The HTTP API of tend serve: a thin adapter over the application layer (docs/api.md). Bearer tokens with roles viewer, operator, admin.',
    },
    'x-tend-lifecycle': { path: '/lifecycle/evaluate' },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths: Object.fromEntries([...paths].map(([p, ops]) => [p, Object.fromEntries(ops)])),
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: errorSchema },
    },
  };
}
