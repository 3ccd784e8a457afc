import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { AuthDecl, Diagnostic, ProviderDecl } from '../core/index.js';
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  formatBytes,
  MAX_RESPONSE_BYTES_CEILING,
  setKey,
} from '../core/index.js';
import type { TrustedDirs } from './confine.js';
import { fileKind, locate, trustedDirsHint } from './confine.js';
import { FieldReader } from './fields.js';
import { readAllowedOrigins } from './origins.js';
import { forbiddenKeysInText } from './key-checks.js';
import type { ParsedDocument } from './parse-documents.js';
import { sourceOf } from './report.js';
import { readPostgresProviderFields } from './postgres-provider-doc.js';
import { checkSecretFile } from './secret-rules.js';
import { didYouMean, listOf } from './suggest.js';

/** The provider types Tend can build today. */
export const PROVIDER_TYPES = ['openapi', 'postgres'] as const;

const FIELDS = [
  'kind',
  'name',
  'type',
  'spec',
  'overlay',
  'endpoint',
  'auth',
  'concurrency',
  'rateLimit',
  'timeoutMs',
  'maxResponseBytes',
  'allowRedirectsTo',
  'parameters',
] as const;
const AUTH_FIELDS = ['header', 'fromEnv', 'fromFile', 'prefix'] as const;
const PROVIDER_NAME = /^[a-z0-9][a-z0-9_-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Defaults of the optional Provider fields. */
export const PROVIDER_DEFAULTS = {
  concurrency: 16,
  rateLimit: 0,
  timeoutMs: 10_000,
  maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
} as const;

/** What reading the intent needs besides the document. */
export interface ProviderDocContext {
  /** The intent directory: relative `spec`, `overlay` and `auth.fromFile` paths start there. */
  readonly dir: string;
  /** When given, `auth.fromEnv` variables missing from it are reported as warnings. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Where `auth.fromFile` may read from (the intent directory and TEND_SECRET_DIRS). */
  readonly secretDirs: TrustedDirs;
  /** Where `spec` and `overlay` files may be read from (the intent directory and TEND_SPEC_DIRS). */
  readonly specDirs: TrustedDirs;
}

/** The result of reading one Provider document. */
export interface ProviderDocResult {
  /** The declaration, present only when the document has no errors. */
  readonly decl?: ProviderDecl;
  /** The declared name, whenever one was written (even if the document has other errors). */
  readonly name?: string;
  readonly diagnostics: Diagnostic[];
}

function isUrl(text: string): boolean {
  return /^https?:\/\//i.test(text);
}

function validHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.host !== '';
  } catch {
    return false;
  }
}

/**
 * Resolves a `spec` / `overlay` location: URLs stay as written, paths become absolute. A path must
 * lead (symbolic links followed) to a regular file inside the intent directory or a directory named
 * in TEND_SPEC_DIRS: intent from a pull request must not make Tend parse, and print pieces of, any
 * file on the machine.
 */
function location(
  r: FieldReader,
  ctx: ProviderDocContext,
  key: 'spec' | 'overlay',
  text: string,
): string | undefined {
  if (isUrl(text)) {
    if (validHttpUrl(text)) return text;
    r.report('field.invalid', `\`${key}\` is not a valid URL: ${text}`, [key]);
    return undefined;
  }
  const abs = resolve(ctx.dir, text);
  const where = locate(abs, ctx.specDirs.roots);
  const variable = ctx.specDirs.variable;
  if (!where.inside) {
    const via = where.real === abs ? '' : `, which leads to ${where.real}`;
    const trusted = ctx.specDirs.roots.length > 1 ? ` and the directories in ${variable}` : '';
    r.report(
      'file.outside',
      `\`${key}\` file ${text}${via} is outside the intent directory${trusted}`,
      [key],
      {
        hint: `copy it into the intent directory, use an http(s) URL, or have whoever runs tend name its directory in ${variable} (${trustedDirsHint(variable)})`,
      },
    );
    return undefined;
  }
  if (!where.exists) {
    r.report('file.not_found', `\`${key}\` file ${text} does not exist (looked at ${abs})`, [key], {
      hint: `${key} paths are relative to the intent directory; an http(s) URL also works`,
    });
    return undefined;
  }
  if (!where.stats.isFile()) {
    r.report('file.not_file', `\`${key}\` ${text} is ${fileKind(where.stats)}, not a file`, [key], {
      hint: `${key} names an OpenAPI${key === 'overlay' ? ' Overlay' : ''} document file`,
    });
    return undefined;
  }
  return abs;
}

/**
 * The keys of a local overlay that could reach a prototype (`key.forbidden`, at overlay:line:column,
 * shown as `shown`). The overlay is merged into the document, so it is checked with the intent, where
 * its positions are known; an unreadable file is left to the loader, which says why.
 */
function overlayKeyProblems(path: string, shown: string): Diagnostic[] {
  let text: string;
  try {
    // Only a regular file is read (a FIFO would block); anything else is reported by `location`.
    if (!statSync(path).isFile()) return [];
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return forbiddenKeysInText(shown, text);
}

const PARAM_NAME = /^[A-Za-z0-9_.-]+$/;

/**
 * Reads `parameters`: values for path parameters that are not the id of a managed parent (Keycloak's
 * `realm`), one string (or number) per parameter name. Anything else is an error at its position.
 */
function readParameters(
  r: FieldReader,
  value: Record<string, unknown>,
): Record<string, string> | undefined {
  const map = r.mapping(value, 'parameters', []);
  if (map === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(map)) {
    if (!PARAM_NAME.test(name)) {
      r.report(
        'field.invalid',
        `\`parameters.${name}\` is not a path parameter name (letters, digits, _, . and -)`,
        ['parameters', name],
        {
          target: 'key',
          hint: 'write the name as the API document writes it in its paths, e.g. realm for /admin/realms/{realm}/clients',
        },
      );
      continue;
    }
    if (typeof v === 'string' && v !== '') setKey(out, name, v);
    else if (typeof v === 'number' && Number.isFinite(v)) setKey(out, name, String(v));
    else {
      r.report(
        'field.type',
        `\`parameters.${name}\` must be a non-empty string or a number: the value of {${name}} in the API's paths`,
        ['parameters', name],
      );
    }
  }
  return out;
}

/**
 * Reads `maxResponseBytes`: a whole number of bytes from 1 up to 256 MiB (a larger answer could
 * hardly be held as one string); the default is 16 MiB.
 */
function readMaxResponseBytes(r: FieldReader, value: Record<string, unknown>): number {
  const bytes = r.number(value, 'maxResponseBytes', [], {
    integer: true,
    min: 1,
    fallback: PROVIDER_DEFAULTS.maxResponseBytes,
  });
  if (bytes <= MAX_RESPONSE_BYTES_CEILING) return bytes;
  r.report(
    'field.invalid',
    `\`maxResponseBytes\` is ${bytes}, more than Tend reads of one answer (${formatBytes(MAX_RESPONSE_BYTES_CEILING)}, ${MAX_RESPONSE_BYTES_CEILING} bytes)`,
    ['maxResponseBytes'],
    {
      hint: `the default is ${formatBytes(DEFAULT_MAX_RESPONSE_BYTES)}; an API whose answers are larger should be read page by page`,
    },
  );
  return PROVIDER_DEFAULTS.maxResponseBytes;
}

/** Reads `auth`; every field besides header/fromEnv/fromFile/prefix could only be an inline secret. */
function readAuth(
  r: FieldReader,
  auth: Record<string, unknown>,
  ctx: ProviderDocContext,
): AuthDecl | undefined {
  const before = r.diagnostics.length;
  for (const key of Object.keys(auth)) {
    if ((AUTH_FIELDS as readonly string[]).includes(key)) continue;
    r.report(
      'secret.inline',
      `\`auth.${key}\` would put a secret in the intent; secrets are never written inline`,
      ['auth', key],
      { target: 'key', hint: 'use { fromEnv: VAR } or { fromFile: path } next to `header`' },
    );
  }
  const header = r.string(auth, 'header', ['auth'], true);
  const prefix = auth.prefix === undefined ? undefined : r.string(auth, 'prefix', ['auth'], false);
  const fromEnv = r.string(auth, 'fromEnv', ['auth'], false);
  const fromFile = r.string(auth, 'fromFile', ['auth'], false);
  if (fromEnv !== undefined && fromFile !== undefined) {
    r.report('field.invalid', '`auth` takes either `fromEnv` or `fromFile`, not both', ['auth'], {
      target: 'key',
    });
  } else if (fromEnv === undefined && fromFile === undefined && r.diagnostics.length === before) {
    r.report(
      'field.required',
      '`auth` needs `fromEnv` or `fromFile`: where to read the secret',
      ['auth'],
      { target: 'key', hint: 'e.g. auth: { header: X-API-Key, fromEnv: API_KEY }' },
    );
  }
  if (fromFile !== undefined && fromEnv === undefined) {
    checkSecretFile(r, fromFile, ['auth'], ctx);
  }
  if (fromEnv !== undefined && !ENV_NAME.test(fromEnv)) {
    r.report('field.invalid', `\`auth.fromEnv\` is not an environment variable name: ${fromEnv}`, [
      'auth',
      'fromEnv',
    ]);
  } else if (fromEnv !== undefined && ctx.env !== undefined && ctx.env[fromEnv] === undefined) {
    r.report(
      'secret.unavailable',
      `environment variable ${fromEnv} is not set`,
      ['auth', 'fromEnv'],
      {
        severity: 'warning',
        hint: `export ${fromEnv} before running tend, or requests will not authenticate`,
      },
    );
  }
  if (r.diagnostics.some((d, i) => i >= before && d.severity === 'error') || header === undefined) {
    return undefined;
  }
  return {
    header,
    ...(prefix !== undefined && { prefix }),
    ...(fromEnv !== undefined && { fromEnv }),
    ...(fromFile !== undefined && { fromFile: resolve(ctx.dir, fromFile) }),
  };
}

/**
 * Reads a `kind: Provider` document: a connection to one platform. Checks every field (required
 * ones, types, URLs, that `spec` and `overlay` files exist in a trusted directory, that `auth` holds
 * no inline secret and its `fromFile` lies in a trusted directory) and
 * returns a ProviderDecl with `spec`, `overlay` and `auth.fromFile` resolved against the intent
 * directory (URLs kept as written) and defaults applied.
 */
export function readProviderDoc(
  doc: ParsedDocument,
  value: Record<string, unknown>,
  ctx: ProviderDocContext,
): ProviderDocResult {
  const r = new FieldReader(doc);
  const postgres = value['type'] === 'postgres';
  if (!postgres) r.unknownFields(value, FIELDS, [], 'a Provider document');

  const name = r.string(value, 'name', [], true);
  if (name !== undefined && !PROVIDER_NAME.test(name)) {
    r.report(
      'name.invalid',
      `provider name \`${name}\` is invalid: use lower-case letters, digits, - and _ (starting with a letter or digit)`,
      ['name'],
    );
  }

  const type = r.string(value, 'type', [], true);
  if (type !== undefined && !(PROVIDER_TYPES as readonly string[]).includes(type)) {
    r.report(
      'provider.unknown_type',
      `unknown provider type \`${type}\`; known types: ${listOf(PROVIDER_TYPES)}.${didYouMean(type, PROVIDER_TYPES)}`,
      ['type'],
    );
  }
  if (postgres) {
    const decl = readPostgresProviderFields(r, value, name, ctx);
    return {
      ...(decl !== undefined && { decl }),
      ...(name !== undefined && { name }),
      diagnostics: r.diagnostics,
    };
  }

  const specText = r.string(value, 'spec', [], true);
  const spec = specText === undefined ? undefined : location(r, ctx, 'spec', specText);
  const overlayText = r.string(value, 'overlay', [], false);
  const overlay = overlayText === undefined ? undefined : location(r, ctx, 'overlay', overlayText);
  if (overlay !== undefined && overlayText !== undefined && !isUrl(overlay)) {
    const shown = isAbsolute(overlayText) ? overlayText : join(ctx.dir, overlayText);
    for (const d of overlayKeyProblems(overlay, shown)) r.diagnostics.push(d);
  }

  const endpoint = r.string(value, 'endpoint', [], true);
  if (endpoint !== undefined && !validHttpUrl(endpoint)) {
    r.report(
      'field.invalid',
      `\`endpoint\` must be an http(s) URL such as http://127.0.0.1:8080/api, got ${endpoint}`,
      ['endpoint'],
    );
  }

  const authValue = r.mapping(value, 'auth', []);
  const auth = authValue === undefined ? undefined : readAuth(r, authValue, ctx);

  const concurrency = r.number(value, 'concurrency', [], {
    integer: true,
    min: 1,
    fallback: PROVIDER_DEFAULTS.concurrency,
  });
  const rateLimit = r.number(value, 'rateLimit', [], {
    integer: false,
    min: 0,
    fallback: PROVIDER_DEFAULTS.rateLimit,
  });
  const timeoutMs = r.number(value, 'timeoutMs', [], {
    integer: true,
    min: 1,
    fallback: PROVIDER_DEFAULTS.timeoutMs,
  });

  const maxResponseBytes = readMaxResponseBytes(r, value);
  const allowRedirectsTo = readAllowedOrigins(r, value, []);
  const parameters = readParameters(r, value);

  const diagnostics = r.diagnostics;
  const failed = diagnostics.some((d) => d.severity === 'error');
  if (failed || name === undefined || spec === undefined || endpoint === undefined) {
    return { ...(name !== undefined && { name }), diagnostics };
  }
  const decl: ProviderDecl = {
    kind: 'Provider',
    name,
    type: 'openapi',
    spec,
    ...(overlay !== undefined && { overlay }),
    endpoint,
    ...(auth !== undefined && { auth }),
    concurrency,
    rateLimit,
    timeoutMs,
    maxResponseBytes,
    ...(allowRedirectsTo !== undefined && { allowRedirectsTo }),
    ...(parameters !== undefined && { parameters }),
    source: sourceOf(doc),
  };
  return { decl, name, diagnostics };
}
