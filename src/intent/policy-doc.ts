import { POLICY_ACTIONS, POLICY_SEVERITIES, isValidName } from '../core/index.js';
import type {
  Diagnostic,
  PolicyAction,
  PolicyDecl,
  PolicyMatch,
  PolicySeverity,
  PolicyValidationDecl,
  PolicyVariableDecl,
} from '../core/index.js';
import { compileExpression } from '../policy/index.js';
import { FieldReader, isRecord, typeName } from './fields.js';
import { readLabels } from './labels.js';
import type { ParsedDocument } from './parse-documents.js';
import type { PathSegment } from './positions.js';
import { formatPath } from './positions.js';
import { sourceOf } from './report.js';
import { didYouMean, listOf } from './suggest.js';

const FIELDS = [
  'kind',
  'name',
  'description',
  'match',
  'variables',
  'validations',
  'actions',
  'severity',
] as const;
const MATCH_FIELDS = ['types', 'names', 'addresses', 'labels'] as const;
const VARIABLE_FIELDS = ['name', 'expression'] as const;
const VALIDATION_FIELDS = ['expression', 'message', 'messageExpression', 'reason'] as const;

/** Variable names: CEL identifiers, read as `variables.<name>`. */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** The reasons Kubernetes' ValidatingAdmissionPolicy knows; another reason is written as is. */
const DEFAULT_REASON = 'Invalid';

/** The example every problem with `validations` points to. */
const VALIDATIONS_HINT =
  'validations:\n  - expression: "object.versioning == true"\n    message: buckets keep versioning on';

/**
 * Reads a `kind: Policy` document (docs/policies.md): every problem reported at its place, every
 * CEL expression compiled here (once: the compiled form is cached by its text for evaluation).
 * The declaration is returned only when the document has no error.
 */
export function readPolicyDoc(
  doc: ParsedDocument,
  value: Record<string, unknown>,
): { decl?: PolicyDecl; diagnostics: Diagnostic[] } {
  const r = new FieldReader(doc);
  r.unknownFields(value, FIELDS, [], 'a Policy document');
  let name = r.string(value, 'name', [], true);
  if (name !== undefined && !isValidName(name)) {
    r.report(
      'name.invalid',
      `Policy name \`${name}\` is invalid: use lower-case letters, digits, - and _, starting and ending with a letter or digit`,
      ['name'],
      { hint: 'e.g. name: buckets-keep-versioning' },
    );
    name = undefined;
  }
  const description = r.string(value, 'description', [], false);
  const match = readMatch(r, value);
  const variables = readVariables(r, value, doc);
  const validations = readValidations(r, value, doc, variables);
  const actions = readActions(r, value);
  const severity = readSeverity(r, value);
  const decl =
    r.diagnostics.length === 0 && name !== undefined && actions !== undefined
      ? {
          kind: 'Policy' as const,
          name,
          ...(description !== undefined ? { description } : {}),
          match,
          variables,
          validations,
          actions,
          severity,
          source: sourceOf(doc),
        }
      : undefined;
  return { ...(decl ? { decl } : {}), diagnostics: r.diagnostics };
}

/** A list of non-empty strings at `key` (one string is a list of one); undefined when absent. */
function globs(
  r: FieldReader,
  obj: Record<string, unknown>,
  key: string,
  at: readonly PathSegment[],
): string[] | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  const path = [...at, key];
  const items = Array.isArray(v) ? (v as unknown[]) : [v];
  if (items.length === 0) {
    r.report(
      'policy.match',
      `\`${formatPath(path)}\` is an empty list, which matches nothing`,
      path,
      {
        hint: `leave \`${key}\` out to match every resource, or list what it should match`,
      },
    );
    return [];
  }
  const out: string[] = [];
  items.forEach((item, i) => {
    const itemAt = Array.isArray(v) ? [...path, i] : path;
    if (typeof item === 'string' && item.trim() !== '') out.push(item.trim());
    else {
      r.report(
        'field.type',
        `\`${formatPath(itemAt)}\` must be a non-empty string (a glob such as sb.*), got ${typeName(item)}`,
        itemAt,
      );
    }
  });
  return out;
}

function readMatch(r: FieldReader, value: Record<string, unknown>): PolicyMatch {
  const m = r.mapping(value, 'match', []);
  if (m === undefined) return {};
  r.unknownFields(m, MATCH_FIELDS, ['match'], '`match`');
  const types = globs(r, m, 'types', ['match']);
  const names = globs(r, m, 'names', ['match']);
  const addresses = globs(r, m, 'addresses', ['match']);
  const labels = readLabels(r, m, 'labels', ['match']);
  return {
    ...(types ? { types } : {}),
    ...(names ? { names } : {}),
    ...(addresses ? { addresses } : {}),
    ...(labels ? { labels } : {}),
  };
}

/** What a rule's expression may name: the inputs, and CEL's type names. */
const RULE_NAMES = ['object', 'declared', 'observed', 'resource', 'variables'];
const KNOWN_NAMES: ReadonlySet<string> = new Set([
  ...RULE_NAMES,
  ...[
    'int',
    'uint',
    'double',
    'bool',
    'string',
    'bytes',
    'list',
    'map',
    'type',
    'null_type',
    'dyn',
  ],
]);

/**
 * Compiles the expression at `path` and checks the variables it reads: each must be declared before
 * (a variable sees only the ones above it). Returns whether it is usable.
 */
function expression(
  r: FieldReader,
  text: string,
  path: readonly PathSegment[],
  declared: readonly string[],
): boolean {
  const c = compileExpression(text);
  if ('error' in c) {
    r.report('policy.expression', `\`${formatPath(path)}\` is not valid CEL: ${c.error}`, path, {
      hint: 'CEL reads the resource as object.<field>, e.g. object.replicas <= 10',
    });
    return false;
  }
  let ok = true;
  for (const id of c.identifiers) {
    if (KNOWN_NAMES.has(id)) continue;
    ok = false;
    r.report(
      'policy.name_unknown',
      `\`${formatPath(path)}\` reads \`${id}\`, which a rule does not have: it sees ${listOf(RULE_NAMES)}.${didYouMean(id, RULE_NAMES)}`,
      path,
      {
        hint: 'read the resource as object.<field>; there is no clock (now) in a rule',
      },
    );
  }
  for (const v of c.variables) {
    if (v === '*' || declared.includes(v)) continue;
    ok = false;
    r.report(
      'policy.variable_unknown',
      `\`${formatPath(path)}\` reads \`variables.${v}\`, which is not declared${declared.length > 0 ? ` before it; declared: ${listOf(declared)}.${didYouMean(v, declared)}` : ''}`,
      path,
      { hint: 'declare it under `variables:` (a variable sees only the ones above it)' },
    );
  }
  return ok;
}

function readVariables(
  r: FieldReader,
  value: Record<string, unknown>,
  doc: ParsedDocument,
): PolicyVariableDecl[] {
  const v = value.variables;
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    r.report('field.type', `\`variables\` must be a list, got ${typeName(v)}`, ['variables'], {
      hint: 'variables:\n  - name: tags\n    expression: "object.tags"',
    });
    return [];
  }
  const out: PolicyVariableDecl[] = [];
  const names: string[] = [];
  v.forEach((entry: unknown, i) => {
    const at = ['variables', i];
    if (!isRecord(entry)) {
      r.report(
        'field.type',
        `\`variables[${i}]\` must be a mapping with name and expression, got ${typeName(entry)}`,
        at,
      );
      return;
    }
    r.unknownFields(entry, VARIABLE_FIELDS, at, 'a variable');
    const name = r.string(entry, 'name', at, true);
    const text = r.string(entry, 'expression', at, true);
    if (name !== undefined && !VARIABLE_NAME.test(name)) {
      r.report(
        'policy.variable_name',
        `variable name \`${name}\` is not a CEL identifier`,
        [...at, 'name'],
        {
          hint: 'letters, digits and _, starting with a letter or _',
        },
      );
      return;
    }
    if (name !== undefined && names.includes(name)) {
      r.report(
        'policy.variable_duplicate',
        `variable \`${name}\` is declared twice`,
        [...at, 'name'],
        {
          hint: 'give each variable its own name',
        },
      );
      return;
    }
    if (name === undefined || text === undefined) return;
    const ok = expression(r, text, [...at, 'expression'], names);
    names.push(name);
    if (ok) out.push({ name, expression: text, source: sourceOf(doc, [...at, 'expression']) });
  });
  return out;
}

function readValidations(
  r: FieldReader,
  value: Record<string, unknown>,
  doc: ParsedDocument,
  variables: readonly PolicyVariableDecl[],
): PolicyValidationDecl[] {
  const v = value.validations;
  if (v === undefined || v === null) {
    r.missing(['validations'], []);
    return [];
  }
  if (!Array.isArray(v) || v.length === 0) {
    r.report(
      'field.type',
      `\`validations\` must be a non-empty list of rules, got ${Array.isArray(v) ? 'an empty list' : typeName(v)}`,
      ['validations'],
      { hint: VALIDATIONS_HINT },
    );
    return [];
  }
  const names = variables.map((x) => x.name);
  const out: PolicyValidationDecl[] = [];
  v.forEach((entry: unknown, i) => {
    const at = ['validations', i];
    if (!isRecord(entry)) {
      r.report(
        'field.type',
        `\`validations[${i}]\` must be a mapping with an expression, got ${typeName(entry)}`,
        at,
        {
          hint: VALIDATIONS_HINT,
        },
      );
      return;
    }
    r.unknownFields(entry, VALIDATION_FIELDS, at, 'a validation');
    const text = r.string(entry, 'expression', at, true);
    const message = r.string(entry, 'message', at, false);
    const messageExpression = r.string(entry, 'messageExpression', at, false);
    const reason = r.string(entry, 'reason', at, false) ?? DEFAULT_REASON;
    const ok = text !== undefined && expression(r, text, [...at, 'expression'], names);
    const messageOk =
      messageExpression === undefined ||
      expression(r, messageExpression, [...at, 'messageExpression'], names);
    if (!ok || !messageOk || text === undefined) return;
    out.push({
      expression: text,
      ...(message !== undefined ? { message } : {}),
      ...(messageExpression !== undefined ? { messageExpression } : {}),
      reason,
      source: sourceOf(doc, [...at, 'expression']),
    });
  });
  return out;
}

function readActions(r: FieldReader, value: Record<string, unknown>): PolicyAction[] | undefined {
  const v = value.actions;
  const hint = `actions: [deny] (or warn, audit): ${listOf(POLICY_ACTIONS)}`;
  if (v === undefined || v === null) {
    r.report(
      'field.required',
      'missing required field `actions`: what a violation does',
      ['actions'],
      {
        target: 'value',
        hint,
      },
    );
    return undefined;
  }
  const items = Array.isArray(v) ? (v as unknown[]) : [v];
  if (items.length === 0) {
    r.report(
      'field.type',
      '`actions` is an empty list: a violation would do nothing',
      ['actions'],
      { hint },
    );
    return undefined;
  }
  const out: PolicyAction[] = [];
  let ok = true;
  items.forEach((item, i) => {
    const at = Array.isArray(v) ? ['actions', i] : ['actions'];
    const text = typeof item === 'string' ? item.trim().toLowerCase() : undefined;
    if (text !== undefined && (POLICY_ACTIONS as readonly string[]).includes(text)) {
      if (!out.includes(text as PolicyAction)) out.push(text as PolicyAction);
      return;
    }
    ok = false;
    const written = typeof item === 'string' ? item : typeName(item);
    r.report(
      'policy.action',
      `unknown action \`${written}\`; known actions: ${listOf(POLICY_ACTIONS)}.${typeof item === 'string' ? didYouMean(item, POLICY_ACTIONS) : ''}`,
      at,
      { hint },
    );
  });
  if (ok && out.includes('deny') && out.includes('warn')) {
    r.report(
      'policy.action',
      '`actions` has both deny and warn: a denied change is never only warned about',
      ['actions'],
      {
        hint: 'keep deny (and audit, to record it), or warn',
      },
    );
    return undefined;
  }
  return ok ? out : undefined;
}

function readSeverity(r: FieldReader, value: Record<string, unknown>): PolicySeverity {
  const v = value.severity;
  if (v === undefined || v === null) return 'medium';
  if (typeof v === 'string' && (POLICY_SEVERITIES as readonly string[]).includes(v)) {
    return v as PolicySeverity;
  }
  const written = typeof v === 'string' ? v : typeName(v);
  r.report(
    'policy.severity',
    `unknown severity \`${written}\`; known severities: ${listOf(POLICY_SEVERITIES)}.${typeof v === 'string' ? didYouMean(v, POLICY_SEVERITIES) : ''}`,
    ['severity'],
  );
  return 'medium';
}
