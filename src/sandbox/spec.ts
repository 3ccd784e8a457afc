// The sandbox's resource types as data. The OpenAPI document (openapi.ts), request validation
// (validate.ts), the lifecycle endpoint (lifecycle.ts) and the resource rules (resources.ts) are all
// derived from this one table, so what the document promises is what the server does.

/** A JSON Schema, as plain data. */
export type JsonSchema = Record<string, unknown>;

/** The names of the sandbox's resource types; each is also its collection path (`/networks`). */
export type TypeName = 'networks' | 'instances' | 'volumes' | 'buckets' | 'services';

/** One top-level property of a resource type and the behaviour the API gives it. */
export interface FieldSpec {
  /** The JSON Schema of the value (type, enum, bounds, pattern), without behaviour keywords. */
  readonly schema: JsonSchema;
  /** Must be given on create and on full replacement (PUT). */
  readonly required?: boolean;
  /** Set by the platform; ignored when sent in a request. */
  readonly readOnly?: boolean;
  /** Can only be set on create; a change is refused (409) and forces a replace (`x-tend-immutable`). */
  readonly createOnly?: boolean;
  /** A secret: accepted in requests, never returned in reads or recorded in the audit feed. */
  readonly sensitive?: boolean;
  /** The value a create or a replacement takes when the field is omitted. */
  readonly default?: unknown;
  /** The value must be the id of an existing object of this type (else 422). */
  readonly references?: TypeName;
}

/** One resource type: its paths, how objects are identified, and its fields. */
export interface TypeSpec {
  readonly name: TypeName;
  /** Singular, capitalised: the schema name and the suffix of operation ids (`createNetwork`). */
  readonly singular: string;
  readonly description: string;
  /** The field that is the identity in the item path (`/T/{idField}`). */
  readonly idField: 'id' | 'name';
  /** For server-generated ids: the prefix before 8 hex digits (`net-`). */
  readonly idPrefix?: string;
  readonly fields: Readonly<Record<string, FieldSpec>>;
}

const NAME: FieldSpec = {
  required: true,
  schema: { type: 'string', minLength: 1, maxLength: 63, description: 'A human name.' },
};

const TAGS: FieldSpec = {
  schema: {
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'Free-form string labels; replaced as a whole when given in an update.',
  },
};

const CREATED_AT: FieldSpec = {
  readOnly: true,
  schema: { type: 'string', format: 'date-time', description: 'When the object was created.' },
};

function serverId(prefix: string): FieldSpec {
  return {
    readOnly: true,
    schema: {
      type: 'string',
      pattern: `^${prefix}[0-9a-f]{8}$`,
      description: 'Chosen by the server on create.',
    },
  };
}

function status(...values: string[]): FieldSpec {
  return { readOnly: true, schema: { type: 'string', enum: values } };
}

/** An IPv4 CIDR block such as `10.0.0.0/16`. */
export const CIDR_PATTERN =
  '^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])/(3[0-2]|[12]?[0-9])$';

/** Bucket names: lower-case letters, digits, dots and dashes, 3 to 63 characters. */
export const BUCKET_NAME_PATTERN = '^[a-z0-9][a-z0-9.-]{2,62}$';

/** Every resource type the sandbox offers, in dependency order (referenced types first). */
export const TYPES: readonly TypeSpec[] = [
  {
    name: 'networks',
    singular: 'Network',
    description: 'A private IPv4 network; instances and services attach to it.',
    idField: 'id',
    idPrefix: 'net-',
    fields: {
      id: serverId('net-'),
      name: NAME,
      cidr: {
        required: true,
        createOnly: true,
        schema: {
          type: 'string',
          pattern: CIDR_PATTERN,
          description: 'IPv4 block, e.g. 10.0.0.0/16.',
        },
      },
      tags: TAGS,
      status: status('available'),
      created_at: CREATED_AT,
    },
  },
  {
    name: 'instances',
    singular: 'Instance',
    description: 'A virtual machine on a network; its private IP comes from the network block.',
    idField: 'id',
    idPrefix: 'i-',
    fields: {
      id: serverId('i-'),
      name: NAME,
      network_id: {
        required: true,
        references: 'networks',
        schema: { type: 'string', description: 'The id of an existing network.' },
      },
      size: {
        default: 'small',
        schema: { type: 'string', enum: ['small', 'medium', 'large'] },
      },
      image: {
        required: true,
        createOnly: true,
        schema: { type: 'string', minLength: 1, description: 'The boot image.' },
      },
      admin_password: {
        sensitive: true,
        schema: {
          type: 'string',
          minLength: 1,
          maxLength: 72,
          description:
            'Never returned once set. At most 72 characters (a longer one is quoted back in the error).',
        },
      },
      tags: TAGS,
      status: status('running'),
      private_ip: {
        readOnly: true,
        schema: { type: 'string', description: 'Allocated from the network block.' },
      },
      created_at: CREATED_AT,
    },
  },
  {
    name: 'volumes',
    singular: 'Volume',
    description: 'A block device attached to an instance.',
    idField: 'id',
    idPrefix: 'vol-',
    fields: {
      id: serverId('vol-'),
      name: NAME,
      instance_id: {
        required: true,
        references: 'instances',
        schema: { type: 'string', description: 'The id of an existing instance.' },
      },
      // No annotation on purpose: only the lifecycle endpoint knows that shrinking needs a replace.
      size: {
        required: true,
        schema: { type: 'integer', minimum: 1, maximum: 16384, description: 'Size in GiB.' },
      },
      tags: TAGS,
      status: status('attached'),
      created_at: CREATED_AT,
    },
  },
  {
    name: 'buckets',
    singular: 'Bucket',
    description: 'An object store bucket; its name is its identity.',
    idField: 'name',
    fields: {
      name: {
        required: true,
        createOnly: true,
        schema: { type: 'string', pattern: BUCKET_NAME_PATTERN, description: 'Globally unique.' },
      },
      versioning: { default: false, schema: { type: 'boolean' } },
      tags: TAGS,
      created_at: CREATED_AT,
    },
  },
  {
    name: 'services',
    singular: 'Service',
    description: 'A set of replicas of a container image, optionally on a network.',
    idField: 'id',
    idPrefix: 'svc-',
    fields: {
      id: serverId('svc-'),
      name: NAME,
      image: { required: true, schema: { type: 'string', minLength: 1 } },
      replicas: { default: 1, schema: { type: 'integer', minimum: 0, maximum: 100 } },
      network_id: {
        references: 'networks',
        schema: { type: 'string', description: 'The id of an existing network, if any.' },
      },
      tags: TAGS,
      status: status('running', 'stopped'),
      created_at: CREATED_AT,
    },
  },
];

/** The spec of a type, or undefined for a name that is not a sandbox type. */
export function typeSpec(name: string): TypeSpec | undefined {
  return TYPES.find((t) => t.name === name);
}

/** The names of the fields a client may write (everything not read-only). */
export function writableFields(spec: TypeSpec): string[] {
  return Object.entries(spec.fields)
    .filter(([, f]) => !f.readOnly)
    .map(([name]) => name);
}
