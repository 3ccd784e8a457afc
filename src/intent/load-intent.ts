import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KNOWN_KINDS, WORKSPACE_NAME, hasErrors, sortDiagnostics } from '../core/index.js';
import type {
  Address,
  Diagnostic,
  Intent,
  PolicyDecl,
  ProviderDecl,
  WorkspaceDecl,
  ProviderDescription,
  ResourceDecl,
} from '../core/index.js';
import { arbitrationDecl, checkArbitration, readArbitrationDoc } from './arbitration-doc.js';
import type { ArbitrationDraft } from './arbitration-doc.js';
import { SECRET_DIRS_VARIABLE, SPEC_DIRS_VARIABLE, trustedDirs } from './confine.js';
import { isRecord } from './fields.js';
import type { ParseCache } from './parse-cache.js';
import { parseIntentFiles } from './parse-files.js';
import type { ParsedDocument } from './parse-documents.js';
import { admitDeclared } from './policy-admission.js';
import { readPolicyDoc } from './policy-doc.js';
import { readProviderDoc } from './provider-doc.js';
import { readIntentFiles } from './read-files.js';
import { checkReferences } from './references.js';
import { reportAt, sourceOf } from './report.js';
import { checkMoves, readResourceDoc } from './resource-doc.js';
import type { ResourceDraft } from './resource-doc.js';
import { createSpecValidator } from './schema-validate.js';
import { didYouMean, listOf } from './suggest.js';

/** What loading an intent needs from the outside. */
export interface LoadIntentOptions {
  /**
   * Loads a provider's description (its resource types and schemas), or says why it cannot. Called
   * once per valid Provider document. The intent layer knows no providers: the engine passes this.
   */
  readonly describe: (decl: ProviderDecl) => Promise<ProviderDescription | Diagnostic>;
  /**
   * The environment `fromEnv` secrets will be read from; when given, unset ones are warnings. It also
   * names the directories outside the intent directory that files may come from: TEND_SECRET_DIRS
   * (`fromFile`) and TEND_SPEC_DIRS (`spec`, `overlay`). Without it, only the intent directory.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * A cache of the files' fast reading by content (parse-cache.ts): an unchanged file is not parsed
   * again. Entries of files no longer in the intent are removed. Without it, every file is parsed.
   */
  readonly cache?: ParseCache;
}

/** The outcome of loading: the intent when there are no errors, and every diagnostic, sorted. */
export interface LoadIntentResult {
  readonly intent?: Intent;
  readonly diagnostics: Diagnostic[];
}

function isDiagnostic(v: ProviderDescription | Diagnostic): v is Diagnostic {
  return 'code' in v && 'severity' in v;
}

interface Classified {
  readonly providers: { doc: ParsedDocument; value: Record<string, unknown> }[];
  readonly resources: { doc: ParsedDocument; value: Record<string, unknown> }[];
  readonly workspaces: { doc: ParsedDocument; value: Record<string, unknown> }[];
  readonly arbitrations: { doc: ParsedDocument; value: Record<string, unknown> }[];
  readonly policies: { doc: ParsedDocument; value: Record<string, unknown> }[];
}

function classify(documents: readonly ParsedDocument[], diagnostics: Diagnostic[]): Classified {
  const out: Classified = {
    providers: [],
    resources: [],
    workspaces: [],
    arbitrations: [],
    policies: [],
  };
  for (const doc of documents) {
    const value = doc.value;
    if (!isRecord(value)) {
      diagnostics.push(
        reportAt(doc, 'document.invalid', 'a document must be a mapping with a `kind` field', {
          hint: `start the document with kind: ${KNOWN_KINDS.join(' or kind: ')}`,
        }),
      );
      continue;
    }
    const kind = value.kind;
    if (kind === undefined || kind === null) {
      diagnostics.push(
        reportAt(
          doc,
          'kind.missing',
          `document has no \`kind\`; known kinds: ${listOf(KNOWN_KINDS)}`,
          {
            hint: 'add kind: Provider or kind: Resource at the top of the document',
          },
        ),
      );
    } else if (kind === 'Provider') {
      out.providers.push({ doc, value });
    } else if (kind === 'Resource') {
      out.resources.push({ doc, value });
    } else if (kind === 'Workspace') {
      out.workspaces.push({ doc, value });
    } else if (kind === 'Arbitration') {
      out.arbitrations.push({ doc, value });
    } else if (kind === 'Policy') {
      out.policies.push({ doc, value });
    } else {
      const text = typeof kind === 'string' ? kind : JSON.stringify(kind);
      diagnostics.push(
        reportAt(
          doc,
          'kind.unknown',
          `unknown kind \`${text}\`; known kinds: ${listOf(KNOWN_KINDS)}.${didYouMean(text, KNOWN_KINDS)}`,
          { path: ['kind'] },
        ),
      );
    }
  }
  return out;
}

/** Reads the Policy documents; a name used twice is an error at the second. */
function readPolicies(docs: Classified['policies'], diagnostics: Diagnostic[]): PolicyDecl[] {
  const policies: PolicyDecl[] = [];
  const first = new Map<string, PolicyDecl>();
  for (const { doc, value } of docs) {
    const result = readPolicyDoc(doc, value);
    append(diagnostics, result.diagnostics);
    const decl = result.decl;
    if (!decl) continue;
    const before = first.get(decl.name);
    if (before) {
      diagnostics.push(
        reportAt(
          doc,
          'policy.duplicate',
          `policy \`${decl.name}\` is already declared at ${where(before)}`,
          {
            path: ['name'],
            hint: 'give each policy a unique name',
          },
        ),
      );
      continue;
    }
    first.set(decl.name, decl);
    policies.push(decl);
  }
  return policies;
}

/** Reads the Workspace document (at most one per directory). */
function readWorkspaceDocs(
  docs: Classified['workspaces'],
  diagnostics: Diagnostic[],
): WorkspaceDecl | undefined {
  let found: WorkspaceDecl | undefined;
  for (const { doc, value } of docs) {
    if (found) {
      diagnostics.push(
        reportAt(doc, 'workspace.duplicate', `the workspace is already named at ${where(found)}`, {
          hint: 'an intent directory manages one workspace: keep one kind: Workspace document',
        }),
      );
      continue;
    }
    let ok = true;
    for (const key of Object.keys(value)) {
      if (key === 'kind' || key === 'name') continue;
      ok = false;
      diagnostics.push(
        reportAt(doc, 'field.unknown', `unknown field \`${key}\` in a Workspace document`, {
          path: [key],
          target: 'key',
          hint: 'a Workspace document has only kind and name',
        }),
      );
    }
    const name = value['name'];
    if (typeof name !== 'string' || !WORKSPACE_NAME.test(name)) {
      ok = false;
      diagnostics.push(
        reportAt(
          doc,
          name === undefined ? 'field.required' : 'workspace.invalid_name',
          name === undefined
            ? 'a Workspace document needs a name'
            : `workspace name ${JSON.stringify(name)} is not valid: use lower-case letters, digits, '.', '_' or '-' (at most 64, starting and ending with a letter or digit)`,
          { path: name === undefined ? [] : ['name'], hint: 'e.g. name: prod' },
        ),
      );
    }
    if (ok) found = { kind: 'Workspace', name: name as string, source: sourceOf(doc) };
  }
  return found;
}

/**
 * Adds every item to `into`. `into.push(...items)` passes each item as an argument, and a file of
 * 100,000 documents (or diagnostics) is more arguments than the stack holds.
 */
function append<T>(into: T[], items: Iterable<T>): void {
  for (const item of items) into.push(item);
}

/** A hash of the intent files (names and contents), so that a changed intent is noticed cheaply. */
export function intentContentHash(files: readonly { path: string; text: string }[]): string {
  const h = createHash('sha256');
  for (const f of files) {
    h.update(basename(f.path));
    h.update('\u0000');
    h.update(f.text);
    h.update('\u0000');
  }
  return `sha256:${h.digest('hex')}`;
}

/** Bumped when what a record of validated files means changes (see `validationFingerprint`). */
const VALIDATED_FORMAT = 1;

let codeHash: string | undefined;

/**
 * A hash of the code that reads and validates intent — every module of this layer and of the core,
 * as built (or as sources, under the tests) — and of the versions of Tend and of the schema
 * validator: a Tend that could judge a document differently never trusts an earlier judgement.
 */
function validationCode(): string {
  if (codeHash !== undefined) return codeHash;
  const h = createHash('sha256').update(`tend-validated-v${VALIDATED_FORMAT}\u0000`);
  const here = dirname(fileURLToPath(import.meta.url));
  for (const dir of [here, join(here, '..', 'core')]) {
    for (const name of readdirSync(dir).sort()) {
      if (!/\.[jt]s$/.test(name) || /\.(?:test|d)\.ts$/.test(name)) continue;
      h.update(name)
        .update('\u0000')
        .update(readFileSync(join(dir, name)))
        .update('\u0000');
    }
  }
  const require = createRequire(import.meta.url);
  for (const pkg of ['../../package.json', 'ajv/package.json', 'ajv-formats/package.json']) {
    h.update(String((require(pkg) as { version?: unknown }).version)).update('\u0000');
  }
  return (codeHash = h.digest('hex'));
}

/**
 * What validating a Resource document depends on besides its own text, when it reads no secret:
 * the code that validates (`validationCode`, by default) and every declared provider with its description
 * (its types, their schemas and annotations). Undefined when a description cannot be written out
 * (a cyclic schema): nothing is then taken as validated.
 */
export function validationFingerprint(
  declared: ReadonlyMap<string, ProviderDescription | undefined>,
  code: string = validationCode(),
): string | undefined {
  const h = createHash('sha256').update(code);
  try {
    for (const name of [...declared.keys()].sort()) {
      h.update(name).update('\u0000');
      h.update(JSON.stringify(declared.get(name) ?? null)).update('\u0000');
    }
  } catch {
    return undefined;
  }
  return h.digest('hex');
}

/**
 * True when a document names a secret's source (`fromEnv`, `fromFile`) anywhere: whether that
 * environment variable is set, or that file exists, is not in the document's text, so its
 * judgement is never reused.
 */
function namesSecretSource(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      for (const item of v as unknown[]) stack.push(item);
    } else if (v !== null && typeof v === 'object') {
      for (const key of Object.keys(v)) {
        if (key === 'fromEnv' || key === 'fromFile') return true;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}

/** `file:line` of a declaration, for messages that point at a second place. */
function where(d: { source: { file: string; line: number } }): string {
  return `${d.source.file}:${d.source.line}`;
}

/**
 * Loads and validates the intent in `dir`: every `*.yaml`/`*.yml` file (sorted by name, several
 * documents per file), checked completely before anything is sent to any API. Every problem is
 * reported at once with file, line, column and field path; `intent` is present only when there are
 * no errors (warnings do not block). Providers are described through `options.describe`; resources
 * are checked against the described types, and their references must form an acyclic graph of
 * declared addresses. Arbitration documents are checked on their own and together (docs/arbitration.md).
 */
export async function loadIntent(
  dir: string,
  options: LoadIntentOptions,
): Promise<LoadIntentResult> {
  const diagnostics: Diagnostic[] = [];
  const read = await readIntentFiles(dir);
  append(diagnostics, read.diagnostics);
  const documents: ParsedDocument[] = [];
  const cache = options.cache;
  const { parsed, keys, fileKeys } = await parseIntentFiles(read.files, {
    ...(cache ? { cache } : {}),
    threads: options.env?.['TEND_PARSE_THREADS'] !== '1',
  });
  // Files (by path) that cannot be recorded as validated: one with any problem, with a document
  // other than a Resource, or with a document naming a secret's source (decision 0029).
  const unclean = new Set<string>();
  parsed.forEach((file, i) => {
    append(documents, file.documents);
    append(diagnostics, file.diagnostics);
    if (file.diagnostics.length > 0) unclean.add(read.files[i]!.path);
  });
  const keyOf = new Map(read.files.map((f, i) => [f.path, fileKeys[i]!] as const));
  // Only when every file was read: a file that could not be read keeps its entry for next time.
  if (cache && read.diagnostics.length === 0) cache.prune(keys);
  const {
    providers: providerDocs,
    resources: resourceDocs,
    workspaces: workspaceDocs,
    arbitrations: arbitrationDocs,
    policies: policyDocs,
  } = classify(documents, diagnostics);
  const workspace = readWorkspaceDocs(workspaceDocs, diagnostics);
  const secretDirs = trustedDirs(dir, options.env, SECRET_DIRS_VARIABLE);
  const specDirs = trustedDirs(dir, options.env, SPEC_DIRS_VARIABLE);
  for (const ignored of [...secretDirs.ignored, ...specDirs.ignored]) {
    diagnostics.push({ code: 'env.ignored', severity: 'warning', message: `${ignored}: ignored` });
  }

  // Providers first: resources are validated against what they describe.
  const declared = new Map<string, ProviderDescription | undefined>();
  const providers: ProviderDecl[] = [];
  const firstByName = new Map<string, { source: { file: string; line: number } }>();
  const toDescribe: { decl: ProviderDecl; doc: ParsedDocument }[] = [];
  for (const { doc, value } of providerDocs) {
    const result = readProviderDoc(doc, value, {
      dir,
      secretDirs,
      specDirs,
      ...(options.env && { env: options.env }),
    });
    append(diagnostics, result.diagnostics);
    if (result.name === undefined) continue;
    const first = firstByName.get(result.name);
    if (first) {
      diagnostics.push(
        reportAt(
          doc,
          'provider.duplicate',
          `provider \`${result.name}\` is already declared at ${where(first)}`,
          {
            path: ['name'],
            hint: 'give each provider a unique name',
          },
        ),
      );
      continue;
    }
    firstByName.set(result.name, { source: sourceOf(doc) });
    declared.set(result.name, undefined);
    if (result.decl) toDescribe.push({ decl: result.decl, doc });
  }
  const described = await Promise.all(
    toDescribe.map(({ decl }) =>
      // A describe that throws (even synchronously) is reported like one that returns a diagnostic.
      Promise.resolve()
        .then(() => options.describe(decl))
        .catch((e: unknown): Diagnostic => ({
          code: 'provider.describe_failed',
          severity: 'error',
          message: `cannot load provider ${decl.name}: ${e instanceof Error ? e.message : String(e)}`,
        })),
    ),
  );
  toDescribe.forEach(({ decl, doc }, i) => {
    const d = described[i]!;
    if (isDiagnostic(d)) {
      const at = reportAt(doc, d.code, d.message, { path: ['spec'] });
      diagnostics.push({
        ...at,
        ...d,
        file: d.file ?? at.file,
        line: d.line ?? at.line,
        column: d.column ?? at.column,
      });
      return;
    }
    declared.set(decl.name, d);
    providers.push(decl);
  });

  for (const { doc } of [...providerDocs, ...workspaceDocs, ...arbitrationDocs, ...policyDocs]) {
    unclean.add(doc.file);
  }
  for (const doc of documents) if (!isRecord(doc.value)) unclean.add(doc.file);
  // Files whose documents validated clean before, under the same code and providers: their specs
  // are not checked against their types again (the document's own structure still is).
  const fingerprint = cache ? validationFingerprint(declared) : undefined;
  const validatedBefore =
    cache && fingerprint !== undefined ? cache.validated(fingerprint) : new Set<string>();
  const validator = createSpecValidator();
  const drafts: ResourceDraft[] = [];
  const firstAt = new Map<Address, ResourceDraft>();
  for (const { doc, value } of resourceDocs) {
    const validated = validatedBefore.has(keyOf.get(doc.file) ?? '');
    const result = readResourceDoc(doc, value, {
      dir,
      secretDirs,
      providers: declared,
      validator,
      validated,
      ...(options.env && { env: options.env }),
    });
    append(diagnostics, result.diagnostics);
    if (result.diagnostics.length > 0 || (!validated && namesSecretSource(value))) {
      unclean.add(doc.file);
    }
    const draft = result.draft;
    if (!draft) continue;
    const first = firstAt.get(draft.address);
    if (first) {
      diagnostics.push(
        reportAt(
          doc,
          'address.duplicate',
          `${draft.address} is already declared at ${where(first)}`,
          {
            path: ['name'],
            address: draft.address,
            hint: 'resource names are unique within their type: rename one of them',
          },
        ),
      );
    } else {
      firstAt.set(draft.address, draft);
    }
    drafts.push(draft);
  }

  const refs = checkReferences(drafts, firstAt);
  append(diagnostics, refs.diagnostics);
  append(diagnostics, checkMoves(drafts, firstAt));

  // Arbitration documents, in load order: their rules are tried in this order.
  const arbitration: ArbitrationDraft[] = [];
  for (const { doc, value } of arbitrationDocs) {
    const result = readArbitrationDoc(doc, value);
    append(diagnostics, result.diagnostics);
    arbitration.push(result.draft);
  }
  append(diagnostics, checkArbitration(arbitration));

  // Policies, then admission of the intent as written (docs/policies.md).
  const policies = readPolicies(policyDocs, diagnostics);
  append(diagnostics, admitDeclared(policies, drafts).diagnostics);

  // Only when every file was read (as for pruning): what validated clean, for the next load.
  if (cache && fingerprint !== undefined && read.diagnostics.length === 0) {
    const clean = new Set(fileKeys.filter((_, i) => !unclean.has(read.files[i]!.path)));
    const same =
      clean.size === validatedBefore.size && [...clean].every((k) => validatedBefore.has(k));
    if (!same) cache.setValidated(fingerprint, clean);
  }

  const sorted = sortDiagnostics(diagnostics);
  if (hasErrors(sorted)) return { diagnostics: sorted };
  const resources: ResourceDecl[] = drafts.map((d) => ({
    kind: 'Resource',
    address: d.address,
    type: d.type,
    provider: d.provider,
    resourceType: d.resourceType,
    name: d.name,
    spec: d.spec,
    labels: d.labels,
    lifecycle: { stateful: d.stateful },
    checks: d.checks,
    dependsOn: refs.dependsOn.get(d.address) ?? [],
    ...(d.movedFrom !== undefined ? { moved: { from: d.movedFrom } } : {}),
    source: d.source,
  }));
  return {
    intent: {
      dir: resolve(dir),
      ...(workspace ? { workspace } : {}),
      contentHash: intentContentHash(read.files),
      providers,
      resources,
      arbitration: arbitration.map(arbitrationDecl),
      policies,
    },
    diagnostics: sorted,
  };
}
