import { TYPES, type FieldSpec, type JsonSchema, type TypeSpec } from './spec.js';

// The sandbox's OpenAPI 3.1 document, built from the type table in spec.ts. It is the contract the
// generic OpenAPI provider manages the sandbox through: nothing the provider needs may live only in
// code. The admin and oracle routes (/_sandbox/*) are deliberately absent: they are not the platform.

const ref = (kind: 'schemas' | 'responses' | 'parameters' | 'headers', name: string) => ({
  $ref: `#/components/${kind}/${name}`,
});

const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

/** The JSON Schema of one property as published: value schema plus behaviour keywords. */
function propertySchema(field: FieldSpec): JsonSchema {
  const schema: JsonSchema = { ...field.schema };
  if (field.readOnly) schema.readOnly = true;
  if (field.createOnly) schema['x-tend-immutable'] = true;
  if (field.sensitive) {
    schema.writeOnly = true;
    schema.format = 'password';
    schema['x-tend-sensitive'] = true;
  }
  if (field.default !== undefined) schema.default = field.default;
  return schema;
}

/**
 * The schema of a type. `resource` is the object as read, created and replaced (PUT); `patch` is a
 * merge-patch body: the same properties, none required, no defaults (an omitted field is unchanged).
 */
function resourceSchema(spec: TypeSpec, mode: 'resource' | 'patch'): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, field] of Object.entries(spec.fields)) {
    const schema = propertySchema(field);
    if (mode === 'patch') delete schema.default;
    properties[name] = schema;
  }
  const required = Object.entries(spec.fields)
    .filter(([, f]) => f.required && !f.readOnly)
    .map(([name]) => name);
  return {
    type: 'object',
    description:
      mode === 'resource'
        ? spec.description
        : `A JSON merge patch of a ${spec.singular.toLowerCase()}: only the given fields change.`,
    additionalProperties: false,
    ...(mode === 'resource' ? { required } : {}),
    properties,
  };
}

const MUTATION_HEADERS = [
  ref('parameters', 'Actor'),
  ref('parameters', 'ActorKind'),
  ref('parameters', 'Intent'),
  ref('parameters', 'Motivation'),
];

const COMMON_ERRORS = {
  '401': ref('responses', 'Unauthorized'),
  '429': ref('responses', 'TooManyRequests'),
  '503': ref('responses', 'Unavailable'),
  default: ref('responses', 'Error'),
};

function typePaths(spec: TypeSpec): Record<string, JsonSchema> {
  const s = spec.singular;
  const item = ref('schemas', s);
  const idParam = {
    name: spec.idField,
    in: 'path',
    required: true,
    description: `The ${s.toLowerCase()}'s ${spec.idField}.`,
    schema: { type: 'string' },
  };
  const collection = {
    get: {
      operationId: `list${s}s`,
      summary: `List every ${s.toLowerCase()}.`,
      tags: [spec.name],
      responses: {
        '200': {
          description: `All ${spec.name} (newly created ones may be missing for a while).`,
          content: json({ type: 'array', items: item }),
        },
        ...COMMON_ERRORS,
      },
    },
    post: {
      operationId: `create${s}`,
      summary: `Create a ${s.toLowerCase()}.`,
      tags: [spec.name],
      parameters: [ref('parameters', 'IdempotencyKey'), ...MUTATION_HEADERS],
      requestBody: { required: true, content: json(item) },
      responses: {
        '201': {
          description: 'Created (or, for a replayed idempotency key, the object created first).',
          headers: { 'Idempotent-Replayed': ref('headers', 'IdempotentReplayed') },
          content: json(item),
        },
        '400': ref('responses', 'Invalid'),
        '409': ref('responses', 'Conflict'),
        '422': ref('responses', 'Unprocessable'),
        ...COMMON_ERRORS,
      },
    },
  };
  const mutationErrors = {
    '400': ref('responses', 'Invalid'),
    '404': ref('responses', 'NotFound'),
    '409': ref('responses', 'Conflict'),
    '422': ref('responses', 'Unprocessable'),
    ...COMMON_ERRORS,
  };
  const itemPath = {
    parameters: [idParam],
    get: {
      operationId: `get${s}`,
      summary: `Read one ${s.toLowerCase()}.`,
      tags: [spec.name],
      responses: {
        '200': { description: `The ${s.toLowerCase()}.`, content: json(item) },
        '404': ref('responses', 'NotFound'),
        ...COMMON_ERRORS,
      },
    },
    patch: {
      operationId: `update${s}`,
      summary: `Change some fields of a ${s.toLowerCase()} (JSON merge patch).`,
      tags: [spec.name],
      parameters: MUTATION_HEADERS,
      requestBody: { required: true, content: json(ref('schemas', `${s}Patch`)) },
      responses: {
        '200': { description: `The updated ${s.toLowerCase()}.`, content: json(item) },
        ...mutationErrors,
      },
    },
    put: {
      operationId: `replace${s}`,
      summary: `Replace every writable field of a ${s.toLowerCase()}.`,
      tags: [spec.name],
      parameters: MUTATION_HEADERS,
      requestBody: { required: true, content: json(item) },
      responses: {
        '200': { description: `The updated ${s.toLowerCase()}.`, content: json(item) },
        ...mutationErrors,
      },
    },
    delete: {
      operationId: `delete${s}`,
      summary: `Delete a ${s.toLowerCase()}.`,
      tags: [spec.name],
      parameters: MUTATION_HEADERS,
      responses: {
        '204': { description: 'Deleted.' },
        '404': ref('responses', 'NotFound'),
        '409': ref('responses', 'Conflict'),
        ...COMMON_ERRORS,
      },
    },
  };
  return { [`/${spec.name}`]: collection, [`/${spec.name}/{${spec.idField}}`]: itemPath };
}

function errorResponse(description: string, extraHeaders?: JsonSchema): JsonSchema {
  return {
    description,
    ...(extraHeaders ? { headers: extraHeaders } : {}),
    content: json(ref('schemas', 'Error')),
  };
}

const AUDIT_ENTRY: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'seq',
    'time',
    'actor',
    'actorKind',
    'intent',
    'motivation',
    'action',
    'type',
    'id',
    'before',
    'after',
  ],
  properties: {
    seq: { type: 'integer', minimum: 1, description: 'Position in the feed; increases by one.' },
    time: { type: 'string', format: 'date-time' },
    actor: {
      type: 'string',
      description: 'The X-Tend-Actor header of the request, or "anonymous".',
    },
    actorKind: {
      type: ['string', 'null'],
      description:
        'The X-Tend-Actor-Kind header of the request (human, controller, agent, pipeline, tend), ' +
        'recorded as sent.',
    },
    intent: { type: ['string', 'null'], description: 'The X-Tend-Intent header of the request.' },
    motivation: {
      type: ['string', 'null'],
      description: 'The X-Tend-Motivation header of the request.',
    },
    action: { type: 'string', enum: ['create', 'update', 'delete'] },
    type: { type: 'string', enum: TYPES.map((t) => t.name) },
    id: { type: 'string', description: 'The object id (for buckets, its name).' },
    before: { type: ['object', 'null'], description: 'The object before; null for a create.' },
    after: { type: ['object', 'null'], description: 'The object after; null for a delete.' },
  },
};

/**
 * The sandbox's OpenAPI 3.1.0 document (a fresh copy each call). With `consistentReads` it promises
 * that reads see writes at once (`x-tend-consistent-reads: true`); without, it promises nothing, which
 * is true of every sandbox (the committed openapi.json is this one).
 */
export function buildOpenApiDocument(options: { consistentReads?: boolean } = {}): JsonSchema {
  const schemas: Record<string, JsonSchema> = {};
  for (const spec of TYPES) {
    schemas[spec.singular] = resourceSchema(spec, 'resource');
    schemas[`${spec.singular}Patch`] = resourceSchema(spec, 'patch');
  }
  Object.assign(schemas, {
    Error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'Stable machine-readable code.' },
        message: { type: 'string', description: 'What went wrong and what to do.' },
        field: { type: 'string', description: 'The offending field, when there is one.' },
      },
    },
    AuditEntry: AUDIT_ENTRY,
    AuditPage: {
      type: 'object',
      required: ['entries', 'cursor'],
      properties: {
        entries: { type: 'array', items: ref('schemas', 'AuditEntry') },
        cursor: {
          type: 'string',
          description: 'Pass as `after` to get what follows; unchanged when there was nothing new.',
        },
      },
    },
    LifecycleRequest: {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'current', 'desired'],
      properties: {
        type: { type: 'string', enum: TYPES.map((t) => t.name) },
        current: { type: 'object', description: 'The object as read now.' },
        desired: {
          type: 'object',
          description: 'The writable fields wanted; only the keys given are compared.',
        },
      },
    },
    LifecycleEvaluation: {
      type: 'object',
      required: ['action', 'fields', 'reason'],
      properties: {
        action: { type: 'string', enum: ['none', 'update', 'replace'] },
        fields: {
          type: 'array',
          items: { type: 'string' },
          description: 'The fields that force the action.',
        },
        reason: { type: 'string' },
      },
    },
  });

  const paths: Record<string, JsonSchema> = {};
  for (const spec of TYPES) Object.assign(paths, typePaths(spec));
  paths['/lifecycle/evaluate'] = {
    post: {
      operationId: 'evaluateLifecycle',
      summary: 'Say whether going from current to desired needs no change, an update or a replace.',
      description:
        'The platform is the authority on update-vs-replace: some rules (such as which changes a ' +
        'volume cannot take in place) are known only here, not annotated in the schemas.',
      tags: ['lifecycle'],
      requestBody: { required: true, content: json(ref('schemas', 'LifecycleRequest')) },
      responses: {
        '200': {
          description: 'The evaluation.',
          content: json(ref('schemas', 'LifecycleEvaluation')),
        },
        '400': ref('responses', 'Invalid'),
        ...COMMON_ERRORS,
      },
    },
  };
  paths['/audit'] = {
    get: {
      operationId: 'listAudit',
      summary: 'Read the audit feed: every create, update and delete, with who, why and what.',
      tags: ['audit'],
      parameters: [
        {
          name: 'after',
          in: 'query',
          description: 'The cursor of a previous page; absent reads from the beginning.',
          schema: { type: 'string', pattern: '^[0-9]+$' },
        },
        {
          name: 'limit',
          in: 'query',
          schema: { type: 'integer', minimum: 1, maximum: 1000, default: 500 },
        },
        {
          name: 'wait',
          in: 'query',
          description:
            'Milliseconds to wait for a new entry when there is none after the cursor (long poll).',
          schema: { type: 'integer', minimum: 0, maximum: 30000, default: 0 },
        },
      ],
      responses: {
        '200': { description: 'A page of the feed.', content: json(ref('schemas', 'AuditPage')) },
        '400': ref('responses', 'Invalid'),
        ...COMMON_ERRORS,
      },
    },
  };

  return {
    openapi: '3.1.0',
    info: {
      title: 'Tend sandbox',
      version: '1.0.0',
      description:
        'A local stand-in for a cloud, shipped with Tend for demos and tests: networks, instances, ' +
        'volumes, buckets and services, a lifecycle endpoint, an attributed audit feed, and ' +
        'switchable faults. Send X-Tend-Actor, X-Tend-Actor-Kind, X-Tend-Intent and X-Tend-Motivation ' +
        'with mutations to have them recorded in the audit feed.',
    },
    'x-tend-lifecycle': { path: '/lifecycle/evaluate' },
    'x-tend-audit': { path: '/audit' },
    ...(options.consistentReads === true ? { 'x-tend-consistent-reads': true } : {}),
    security: [{ apiKey: [] }, {}],
    tags: [
      ...TYPES.map((t) => ({ name: t.name, description: t.description })),
      { name: 'lifecycle' },
      { name: 'audit' },
    ],
    paths,
    components: {
      schemas,
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Makes a create safe to resend: the same key with the same body returns the object ' +
            'created first (201, Idempotent-Replayed: true); with another body, 422.',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
        Actor: {
          name: 'X-Tend-Actor',
          in: 'header',
          required: false,
          description:
            'Who is making the change (recorded in the audit feed; default "anonymous").',
          schema: { type: 'string' },
        },
        ActorKind: {
          name: 'X-Tend-Actor-Kind',
          in: 'header',
          required: false,
          description:
            'What kind of actor is making the change: human, controller, agent, pipeline or tend ' +
            '(recorded in the audit feed as sent).',
          schema: { type: 'string' },
        },
        Intent: {
          name: 'X-Tend-Intent',
          in: 'header',
          required: false,
          description: 'What the change is for (availability, cost, security, …).',
          schema: { type: 'string' },
        },
        Motivation: {
          name: 'X-Tend-Motivation',
          in: 'header',
          required: false,
          description: 'Why now (incident, scheduled, budget, CVE, …).',
          schema: { type: 'string' },
        },
      },
      headers: {
        IdempotentReplayed: {
          description: '"true" when the response replays an earlier create with the same key.',
          schema: { type: 'string', enum: ['true'] },
        },
        RetryAfter: {
          description: 'Seconds to wait before trying again.',
          schema: { type: 'integer', minimum: 1 },
        },
      },
      responses: {
        Invalid: errorResponse(
          'The request is invalid (code `invalid`; `field` names the culprit).',
        ),
        Unauthorized: errorResponse('Missing or wrong X-API-Key (code `unauthorized`).'),
        NotFound: errorResponse('No such object (code `not_found`).'),
        Conflict: errorResponse(
          'Refused: `already_exists`, `immutable_field` (replace the object instead), ' +
            '`has_dependents` (delete those first), or another state conflict.',
        ),
        Unprocessable: errorResponse(
          '`invalid_reference` (a referenced object does not exist) or `idempotency_key_reused`.',
        ),
        TooManyRequests: errorResponse('Slow down (code `rate_limited`).', {
          'Retry-After': ref('headers', 'RetryAfter'),
        }),
        Unavailable: errorResponse('Temporarily unavailable; safe to retry (code `unavailable`).'),
        Error: errorResponse('An unexpected error.'),
      },
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description: 'Required only when the sandbox was started with an API key.',
        },
      },
    },
  };
}
