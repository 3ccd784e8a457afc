import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { SandboxError } from './errors.js';
import { buildOpenApiDocument } from './openapi.js';
import { TYPES, type JsonSchema, type TypeName, type TypeSpec } from './spec.js';

/** Which request schema a body is checked against: full objects (POST, PUT) or merge patches. */
export type BodyKind = 'resource' | 'patch';

/**
 * Validates request bodies against the very schemas the OpenAPI document publishes, so a body the
 * document allows is a body the sandbox accepts.
 */
export class RequestValidator {
  private readonly validators = new Map<string, ValidateFunction>();

  constructor() {
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: false });
    ajv.addKeyword('x-tend-immutable');
    ajv.addKeyword('x-tend-sensitive');
    // Both formats only annotate: date-time is on read-only fields (stripped before validation)
    // and `password` says "secret", not a shape.
    ajv.addFormat('date-time', true);
    ajv.addFormat('password', true);
    const components = buildOpenApiDocument().components as { schemas: Record<string, JsonSchema> };
    for (const spec of TYPES) {
      this.validators.set(
        `${spec.name}:resource`,
        ajv.compile(schemaOf(components.schemas, spec.singular)),
      );
      this.validators.set(
        `${spec.name}:patch`,
        ajv.compile(schemaOf(components.schemas, `${spec.singular}Patch`)),
      );
    }
  }

  /**
   * Checks a parsed request body and returns the writable part of it (read-only fields dropped: a
   * GET-modify-PUT must work). Throws a 400 `invalid` SandboxError naming the first bad field.
   */
  check(spec: TypeSpec, kind: BodyKind, body: unknown): Record<string, unknown> {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new SandboxError(400, 'invalid', 'the request body must be a JSON object');
    }
    const writable: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(body)) {
      if (!spec.fields[name]?.readOnly) writable[name] = value;
    }
    const validate = this.validators.get(`${spec.name}:${kind}`);
    if (!validate) throw new Error(`no validator for ${spec.name}`);
    if (!validate(writable)) {
      const error = validate.errors?.[0];
      throw error
        ? toSandboxError(spec.name, error, writable)
        : new SandboxError(400, 'invalid', 'invalid body');
    }
    return writable;
  }
}

function schemaOf(schemas: Record<string, JsonSchema>, name: string): JsonSchema {
  const schema = schemas[name];
  if (!schema) throw new Error(`the OpenAPI document has no schema ${name}`);
  return schema;
}

/** Turns Ajv's first error into a message that names the field and what to send instead. */
function toSandboxError(type: TypeName, error: ErrorObject, body: unknown): SandboxError {
  const path = error.instancePath.split('/').slice(1).join('.');
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      const field = path ? `${path}.${name}` : name;
      return new SandboxError(
        400,
        'invalid',
        `unknown field "${field}": ${type} has no such field`,
        field,
      );
    }
    case 'required': {
      const name = String(params.missingProperty);
      const field = path ? `${path}.${name}` : name;
      return new SandboxError(400, 'invalid', `missing required field "${field}"`, field);
    }
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ');
      return new SandboxError(400, 'invalid', `${path} must be one of ${allowed}`, path);
    }
    case 'maxLength':
      // Quotes what it was sent, as many platforms do: a secret sent too long comes back in the
      // error, and a client has to keep it out of its own output (docs/sandbox.md).
      return new SandboxError(
        400,
        'invalid',
        `${path} must be at most ${String(params.limit)} characters, got ${JSON.stringify(valueAt(body, error.instancePath))}`,
        path,
      );
    case 'pattern':
      return new SandboxError(
        400,
        'invalid',
        `${path} must match the pattern ${String(params.pattern)}`,
        path,
      );
    default:
      return new SandboxError(
        400,
        'invalid',
        `${path || 'the body'} ${error.message ?? 'is invalid'}`,
        path || undefined,
      );
  }
}

/** The value at a JSON pointer (`/a/b`) in a parsed body; undefined when there is none. */
function valueAt(body: unknown, pointer: string): unknown {
  let cur = body;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}
