import {
  address as makeAddress,
  isValidName,
  parseAddress,
  parseType,
  valueAt,
} from '../core/index.js';
import type {
  Address,
  CheckDecl,
  Diagnostic,
  ProviderDescription,
  ResourceTypeInfo,
  SourceLocation,
} from '../core/index.js';
import { readChecks } from './checks-doc.js';
import { FieldReader, isRecord, typeName } from './fields.js';
import { readLabels } from './labels.js';
import type { ParsedDocument } from './parse-documents.js';
import { reportAt, sourceOf } from './report.js';
import type { SpecValidator } from './schema-validate.js';
import { checkSecrets, readSecretsList } from './secret-rules.js';
import type { SecretContext } from './secret-rules.js';
import { didYouMean, listOf } from './suggest.js';

const FIELDS = [
  'kind',
  'type',
  'name',
  'labels',
  'spec',
  'secrets',
  'lifecycle',
  'checks',
  'moved',
] as const;

/** A Resource document read as far as it could be: enough to check addresses and references. */
export interface ResourceDraft {
  readonly doc: ParsedDocument;
  readonly address: Address;
  readonly type: string;
  readonly provider: string;
  readonly resourceType: string;
  readonly name: string;
  /** The spec as written; empty when missing or not a mapping. */
  readonly spec: Readonly<Record<string, unknown>>;
  /** The valid labels; empty when there are none. */
  readonly labels: Readonly<Record<string, string>>;
  readonly stateful: boolean;
  readonly checks: readonly CheckDecl[];
  /** The `checks` value as written, searched for references. */
  readonly rawChecks: unknown;
  /** `moved.from` when it is a well-formed address of the same type (see `readMoved`). */
  readonly movedFrom?: Address;
  readonly source: SourceLocation;
  /** True when the document itself has no errors. */
  readonly ok: boolean;
}

/**
 * What reading a Resource document needs besides the document: the providers, and where secret
 * references may read from (`env`, when given, makes unset `fromEnv` variables warnings).
 */
export interface ResourceDocContext extends SecretContext {
  /** Every declared provider name; the description when it could be loaded. */
  readonly providers: ReadonlyMap<string, ProviderDescription | undefined>;
  readonly validator: SpecValidator;
  /**
   * True when this exact document validated with no diagnostic before, under the same providers
   * and code, and names no secret's source (load-intent.ts, decision 0029): the checks of its spec
   * against its type — output-only fields, secret rules, schema — are not run again.
   */
  readonly validated?: boolean;
}

/** The resource type a `type` field names, reporting `type.unknown` with what does exist. */
function lookupType(
  r: FieldReader,
  provider: string,
  resourceType: string,
  ctx: ResourceDocContext,
): ResourceTypeInfo | undefined {
  if (!ctx.providers.has(provider)) {
    const declared = [...ctx.providers.keys()];
    r.report(
      'type.unknown',
      `provider \`${provider}\` is not declared; declared providers: ${listOf(declared)}.${didYouMean(provider, declared)}`,
      ['type'],
      { hint: 'declare it with a `kind: Provider` document, or fix the prefix of `type`' },
    );
    return undefined;
  }
  const description = ctx.providers.get(provider);
  if (description === undefined) return undefined; // its own problem is already reported
  const info = description.types.find((t) => t.name === resourceType);
  if (info) return info;
  const names = description.types.map((t) => t.name);
  r.report(
    'type.unknown',
    `provider \`${provider}\` has no resource type \`${resourceType}\`; its types: ${listOf(names)}.${didYouMean(resourceType, names)}`,
    ['type'],
  );
  return undefined;
}

/** Fields the platform sets, judged before (and instead of) the schema. */
function checkOutputOnly(
  r: FieldReader,
  info: ResourceTypeInfo,
  spec: Readonly<Record<string, unknown>>,
): void {
  for (const field of info.outputOnly) {
    const path = field.split('.');
    if (valueAt(spec, path) === undefined) continue;
    r.report(
      'schema.output_only',
      `\`spec.${field}\` is set by the platform and cannot be declared`,
      ['spec', ...path],
      {
        target: 'key',
        hint: 'remove it; refer to it from other resources with ${type/name.field}',
      },
    );
  }
}

/**
 * Reads `moved: { from: <address> }`: the address this resource had before a rename. `from` must be
 * an address of the same type (a move keeps the object, so it keeps its type) other than this one.
 * Whether `from` is still declared is checked across documents (`checkMoves`).
 */
function readMoved(
  r: FieldReader,
  value: Record<string, unknown>,
  type: string | undefined,
  self: Address | undefined,
): Address | undefined {
  const moved = r.mapping(value, 'moved', []);
  if (!moved) return undefined;
  r.unknownFields(moved, ['from'], ['moved'], '`moved`');
  const from = r.string(moved, 'from', ['moved'], true);
  if (from === undefined) return undefined;
  const parts = parseAddress(from);
  if (!parts) {
    r.report(
      'moved.invalid',
      `\`moved.from\` must be the resource's old address <provider>.<type>/<name>, got ${JSON.stringify(from)}`,
      ['moved', 'from'],
      { hint: type ? `e.g. ${type}/old-name` : 'e.g. sb.buckets/assets' },
    );
    return undefined;
  }
  if (type !== undefined && parts.type !== type) {
    r.report(
      'moved.type',
      `\`moved.from\` names a ${parts.type} but this resource is a ${type}: a move keeps the object, so it keeps its type`,
      ['moved', 'from'],
      { hint: 'only the name part of an address can change in a move' },
    );
    return undefined;
  }
  if (from === self) {
    r.report('moved.self', `\`moved.from\` is this resource's own address`, ['moved', 'from'], {
      hint: 'remove `moved` once the move has been applied, or name the old address',
    });
    return undefined;
  }
  return from as Address;
}

/** The fields of the common Resource document, read without a FieldReader once it validated. */
const PLAIN_FIELDS = new Set(['kind', 'type', 'name', 'spec']);

/**
 * The draft of a document that validated clean before (`ctx.validated`) and holds only `kind`,
 * `type`, `name` and `spec` — what `readResourceDoc` gives for it, without reading its structure
 * again; undefined for any other document, which is read the usual way.
 */
function validatedPlainDraft(
  doc: ParsedDocument,
  value: Record<string, unknown>,
  ctx: ResourceDocContext,
): ResourceDraft | undefined {
  for (const key in value) if (!PLAIN_FIELDS.has(key)) return undefined;
  const { type, name, spec } = value;
  if (typeof type !== 'string' || typeof name !== 'string') return undefined;
  const parsed = parseType(type);
  if (!parsed || !isValidName(name) || (spec !== undefined && spec !== null && !isRecord(spec))) {
    return undefined;
  }
  const info = ctx.providers
    .get(parsed.provider)
    ?.types.find((t) => t.name === parsed.resourceType);
  if (!info) return undefined;
  return {
    doc,
    address: makeAddress(type, name),
    type,
    provider: parsed.provider,
    resourceType: parsed.resourceType,
    name,
    spec: isRecord(spec) ? spec : {},
    labels: {},
    stateful: info.stateful === true,
    checks: [],
    rawChecks: undefined,
    source: sourceOf(doc),
    ok: true,
  };
}

/**
 * Reads a `kind: Resource` document: its structure (`type`, `name`, `labels`, `spec`, `secrets`,
 * `lifecycle`, `checks`), its type against the declared providers, and its spec against the type's schema,
 * output-only fields and secret rules (secret-rules.ts). Returns a draft whenever type and name form an address, so that
 * duplicates and references can be checked even for documents with other errors.
 */
export function readResourceDoc(
  doc: ParsedDocument,
  value: Record<string, unknown>,
  ctx: ResourceDocContext,
): { draft?: ResourceDraft; diagnostics: Diagnostic[] } {
  if (ctx.validated === true) {
    const draft = validatedPlainDraft(doc, value, ctx);
    if (draft) return { draft, diagnostics: [] };
  }
  const typeText = typeof value.type === 'string' ? value.type : undefined;
  const nameText = typeof value.name === 'string' ? value.name : undefined;
  const parsedType = typeText === undefined ? undefined : parseType(typeText);
  const addr =
    parsedType && nameText !== undefined && isValidName(nameText)
      ? makeAddress(typeText!, nameText)
      : undefined;
  const r = new FieldReader(doc, addr);
  r.unknownFields(value, FIELDS, [], 'a Resource document');

  const type = r.string(value, 'type', [], true);
  if (type !== undefined && !parsedType) {
    r.report(
      'type.invalid',
      `\`type\` must be <provider>.<resourceType> (e.g. sb.volumes), got ${type}`,
      ['type'],
    );
  }
  const name = r.string(value, 'name', [], true);
  if (name !== undefined && !isValidName(name)) {
    r.report(
      'name.invalid',
      `resource name \`${name}\` is invalid: use lower-case letters, digits, - and _, starting and ending with a letter or digit`,
      ['name'],
    );
  }

  let spec: Readonly<Record<string, unknown>> = {};
  let specReadable = true;
  if (value.spec !== undefined && value.spec !== null) {
    if (isRecord(value.spec)) spec = value.spec;
    else {
      specReadable = false;
      r.report('field.type', `\`spec\` must be a mapping of fields, got ${typeName(value.spec)}`, [
        'spec',
      ]);
    }
  }

  let declaredStateful: boolean | undefined;
  const lifecycle = r.mapping(value, 'lifecycle', []);
  if (lifecycle) {
    r.unknownFields(lifecycle, ['stateful'], ['lifecycle'], '`lifecycle`');
    if (lifecycle.stateful !== undefined && typeof lifecycle.stateful !== 'boolean') {
      r.report(
        'field.type',
        `\`lifecycle.stateful\` must be true or false, got ${typeName(lifecycle.stateful)}`,
        ['lifecycle', 'stateful'],
      );
    } else if (typeof lifecycle.stateful === 'boolean') declaredStateful = lifecycle.stateful;
  }

  // Labels are Tend's own metadata: kept beside the spec, never in it.
  const labels = readLabels(r, value, 'labels', []) ?? {};

  const movedFrom = readMoved(r, value, typeText, addr);
  const listedSecrets = readSecretsList(r, value);

  const checks = readChecks(doc, value.checks, addr, {
    dir: ctx.dir,
    secretDirs: ctx.secretDirs,
  });
  for (const d of checks.diagnostics) r.diagnostics.push(d);

  // A type whose objects hold data makes its resources stateful unless they say otherwise.
  let typeStateful = false;
  if (parsedType && specReadable) {
    const info = lookupType(r, parsedType.provider, parsedType.resourceType, ctx);
    if (info) typeStateful = info.stateful === true;
    // A document that validated clean before (same text, providers and code) is not checked again.
    if (info && ctx.validated !== true) {
      checkOutputOnly(r, info, spec);
      const secretPaths = checkSecrets(r, info, spec, listedSecrets, ctx);
      const problems = ctx.validator.validate(info, spec, secretPaths);
      if ('unavailable' in problems) {
        r.report(
          'schema.unavailable',
          `the schema of ${typeText} cannot be compiled, so this spec was not validated: ${problems.unavailable}`,
          ['type'],
          {
            severity: 'warning',
            hint: 'the provider description is at fault; fix the spec or its overlay',
          },
        );
      } else {
        for (const p of problems) {
          r.report(p.code, p.message, ['spec', ...p.path], { target: p.target });
        }
      }
    }
  }

  const diagnostics = r.diagnostics;
  if (!addr || !parsedType || nameText === undefined) return { diagnostics };
  const draft: ResourceDraft = {
    doc,
    address: addr,
    type: typeText!,
    provider: parsedType.provider,
    resourceType: parsedType.resourceType,
    name: nameText,
    spec,
    labels,
    stateful: declaredStateful ?? typeStateful,
    checks: checks.checks,
    rawChecks: value.checks,
    ...(movedFrom !== undefined ? { movedFrom } : {}),
    source: sourceOf(doc),
    ok: !diagnostics.some((d) => d.severity === 'error'),
  };
  return { draft, diagnostics };
}

/**
 * Checks `moved.from` across documents: the old address must no longer be declared (otherwise both
 * would match one object), and two resources cannot move from the same address. `declared` maps each
 * address to its first declaration among `drafts`.
 */
export function checkMoves(
  drafts: readonly ResourceDraft[],
  declared: ReadonlyMap<Address, ResourceDraft>,
): Diagnostic[] {
  const firstFrom = new Map<Address, ResourceDraft>();
  const diagnostics: Diagnostic[] = [];
  for (const d of drafts) {
    const from = d.movedFrom;
    if (from === undefined) continue;
    const report = (code: string, message: string, hint: string) =>
      diagnostics.push(
        reportAt(d.doc, code, message, { path: ['moved', 'from'], address: d.address, hint }),
      );
    const still = declared.get(from);
    if (still) {
      report(
        'moved.still_declared',
        `\`moved.from\` names ${from}, which is still declared at ${still.source.file}:${still.source.line}`,
        'remove the old resource document (a move renames it), or remove `moved`',
      );
      continue;
    }
    const first = firstFrom.get(from);
    if (first) {
      report(
        'moved.duplicate',
        `${first.address} already moves from ${from}: one object cannot move to two addresses`,
        'keep `moved` on one of them',
      );
      continue;
    }
    firstFrom.set(from, d);
  }
  return diagnostics;
}
