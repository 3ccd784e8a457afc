import { NAME_LIKE } from './fields/identity.js';
import { isObject, jsonMedia } from './fields/schema-view.js';

/**
 * What `tend providers inspect` would need to give a type an identity (issue 27, item 4): one line
 * naming the overlay keys to write, with a target ready to paste, or the probe to run when the
 * document offers nothing to name. Tend never guesses an identity (DESIGN.md): a required name the
 * document does not call unique is only a candidate, so the line says on what condition the keys
 * are true and which probe finds out (`tend providers probe`, issue 27 item 2).
 */
export interface TypeNeeds {
  /** The hint on one line, for people. */
  readonly line: string;
  /**
   * The overlay action that would give the type an identity, when the document names a candidate:
   * its JSONPath target (the create body's named schema, else the create operation) and its keys.
   */
  readonly overlay?: {
    readonly target: string;
    readonly update: Readonly<Record<string, string>>;
    /** What must be true of the platform for the keys to be right. */
    readonly when: string;
  };
  /** The probe that learns from the platform what the document does not say. */
  readonly probe: string;
}

/** What `identityNeeds` reads of a type without an identity. */
export interface NeedsInput {
  readonly name: string;
  /** The document as loaded (dereferenced: a `$ref` is the very object it names). */
  readonly document: Readonly<Record<string, unknown>>;
  /** Where the document came from, as the probe takes it. */
  readonly spec: string;
  /** Set for a Swagger 2.0 document read as OpenAPI 3 (overlays address it as written). */
  readonly convertedFrom?: string;
  /** The create as the document writes it. */
  readonly create: { readonly method: string; readonly path: string };
  /** The create body's fields Tend sends, and those it requires. */
  readonly fields: readonly string[];
  readonly required: readonly string[];
  /** Set when the create body wraps the fields in a property (the keys then go on the operation). */
  readonly wrapped: boolean;
  /** The path parameters above the objects (a parent, a fixed or a provider value): the scope. */
  readonly scope: readonly string[];
  /** Whether another type's create sends the same body schema (its name is then no target). */
  readonly sharedBody: (schema: unknown) => boolean;
}

/** The hint for a type inspect found without an identity. */
export function identityNeeds(input: NeedsInput): TypeNeeds {
  const scope = input.scope.map((p) => ` --scope ${p}=<value>`).join('');
  const probe = `tend providers probe ${shellWord(input.spec)} --endpoint <url> --type ${shellWord(input.name)}${scope} --yes`;
  // A required name-like field first; else an optional one (a declared key becomes required).
  const key =
    NAME_LIKE.find((f) => input.required.includes(f) && input.fields.includes(f)) ??
    NAME_LIKE.find((f) => input.fields.includes(f));
  if (key === undefined) {
    return {
      line: `no field to name as a key or a marker place: run \`${probe}\` to learn which field the platform keeps unique or keeps a marker in, then declare x-tend-identity`,
      probe,
    };
  }
  const target = targetOf(input);
  const update = { 'x-tend-identity': 'natural-key', 'x-tend-natural-key': key };
  const when = `the platform refuses a second ${input.name} object with the same ${key}`;
  return {
    line: `x-tend-identity: natural-key and x-tend-natural-key: ${key} on ${target}, if ${when} (\`${probe}\` finds out)`,
    overlay: { target, update, when },
    probe,
  };
}

/**
 * Where the keys go: the create body's schema by its name in the document (`$.components.schemas.X`,
 * `$.definitions.X` for a Swagger 2.0 document) when it is one no other type creates with, else the
 * create operation (`$.paths['/widgets'].post`), which Tend reads the same keys from.
 */
function targetOf(input: NeedsInput): string {
  const operation = `$.paths[${jsonPathString(input.create.path)}].${input.create.method.toLowerCase()}`;
  if (input.wrapped) return operation;
  const body = createBody(input.document, input.create);
  if (body === undefined || input.sharedBody(body)) return operation;
  const components = input.document['components'];
  const schemas = isObject(components) ? components['schemas'] : undefined;
  if (!isObject(schemas)) return operation;
  const name = Object.keys(schemas).find((k) => schemas[k] === body);
  if (name === undefined) return operation;
  const at = /^swagger/i.test(input.convertedFrom ?? '') ? 'definitions' : 'components.schemas';
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)
    ? `$.${at}.${name}`
    : `$.${at}[${jsonPathString(name)}]`;
}

/** The JSON body schema of the create operation as the document holds it. */
export function createBody(
  document: Readonly<Record<string, unknown>>,
  create: { readonly method: string; readonly path: string },
): unknown {
  const paths = document['paths'];
  const item = isObject(paths) ? paths[create.path] : undefined;
  const op = isObject(item) ? item[create.method.toLowerCase()] : undefined;
  const body = isObject(op) ? op['requestBody'] : undefined;
  const schema = isObject(body) ? jsonMedia(body['content'])?.schema : undefined;
  return isObject(schema) ? schema : undefined;
}

/** A JSONPath string literal (single-quoted, as JSONPath writes member names). */
export function jsonPathString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** A word a POSIX shell reads as itself (single-quoted when it holds anything else). */
function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}
