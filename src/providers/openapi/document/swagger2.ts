import { TendError, assertNoForbiddenKeys } from '../../../core/index.js';
import { isObject } from '../fields/schema-view.js';

/** Where the converter writes a problem it tolerated, in place of throwing. */
const WARNING_KEY = 'x-s2o-warning';

/** The result of converting a Swagger 2.0 document. */
export interface ConvertedDocument {
  /** The equivalent OpenAPI 3.0 document. */
  readonly document: Record<string, unknown>;
  /** Problems the converter tolerated or patched. */
  readonly warnings: readonly string[];
}

/**
 * Converts a parsed Swagger 2.0 document to OpenAPI 3.0 with swagger2openapi, in its forgiving mode:
 * small spec bugs are patched and reported as warnings, never fatal. Vendor extensions (`x-…`) are
 * kept where they were, so overlay annotations written against the 2.0 document survive. Throws a
 * TendError only when the converter cannot produce a document at all, or (`input.forbidden_key`)
 * when the document holds a `__proto__`, `constructor` or `prototype` key.
 */
export async function convertSwagger2(
  raw: Record<string, unknown>,
  location: string,
): Promise<ConvertedDocument> {
  const options: { patch: boolean; warnOnly: boolean; resolve: boolean; patches?: number } = {
    patch: true,
    warnOnly: true,
    resolve: false,
  };
  // The converter copies the document by key: one that could reach a prototype never gets there.
  assertNoForbiddenKeys(raw, location);
  let converted: Record<string, unknown>;
  // The converter (and the HTTP client it brings) is loaded only for a Swagger 2.0 document
  // (docs/decisions/0033-lazy-modules.md).
  const { default: s2o } = await import('swagger2openapi');
  try {
    const result = await s2o.convertObj(structuredClone(raw), options);
    converted = result.openapi;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    throw new TendError(
      'openapi.convert_failed',
      `${location} is a Swagger 2.0 document that cannot be converted to OpenAPI 3 (${message.split('\n')[0]}); fix the document or convert it yourself and point spec at the result`,
      { phase: 'load' },
    );
  }
  if (!isObject(converted)) {
    throw new TendError(
      'openapi.convert_failed',
      `${location}: converting Swagger 2.0 to OpenAPI 3 gave no document; convert it yourself and point spec at the result`,
      { phase: 'load' },
    );
  }
  const warnings = collectWarnings(converted);
  const patches = options.patches ?? 0;
  if (patches > 0) {
    warnings.unshift(
      `converted from Swagger 2.0; ${patches} small error(s) in the document were patched on the way`,
    );
  }
  return { document: converted, warnings };
}

/** Removes the converter's inline warnings from the document and returns them, with where they were. */
function collectWarnings(root: unknown): string[] {
  const out: string[] = [];
  const seen = new Set<unknown>();
  const walk = (value: unknown, at: string): void => {
    if (value === null || typeof value !== 'object' || seen.has(value)) return;
    seen.add(value);
    if (Array.isArray(value)) {
      value.forEach((v, i) => walk(v, `${at}/${i}`));
      return;
    }
    const obj = value as Record<string, unknown>;
    const w = obj[WARNING_KEY];
    if (w !== undefined) {
      out.push(
        `Swagger 2.0 conversion: ${typeof w === 'string' ? w : JSON.stringify(w)} (at ${at})`,
      );
      delete obj[WARNING_KEY];
    }
    for (const [k, v] of Object.entries(obj))
      walk(v, `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  };
  walk(root, '#');
  return out;
}
