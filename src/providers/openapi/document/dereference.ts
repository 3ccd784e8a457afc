import type { ParserOptions } from '@apidevtools/json-schema-ref-parser';
import { dropUnusedIds } from './unused-ids.js';

/**
 * How json-schema-ref-parser dereferences a prepared document (docs/decisions/0035-ref-parser.md):
 * with no resolver at all (every `$ref` left is internal); a recursive schema becomes a cycle in
 * the object graph; `summary` and `description` written beside a `$ref` (OpenAPI 3.1) are kept over
 * those of what it points to.
 */
const OPTIONS = {
  resolve: { external: false, file: false, http: false },
  dereference: { circular: true, preservedProperties: ['summary', 'description'] },
} as const satisfies ParserOptions;

/**
 * Loads json-schema-ref-parser (docs/decisions/0033-lazy-modules.md: the first document a command
 * reads does) and returns the function that dereferences a document in place: every `$ref` of a
 * document whose `$ref`s are all internal (`#…`) is replaced by what it points to, after the `$id`s
 * nothing needs are dropped (dropUnusedIds). It reads no file and no URL, and throws what the library
 * throws (a pointer to nothing, say: the loader repairs those before).
 */
export async function loadDereferencer(): Promise<
  (document: Record<string, unknown>) => Promise<Record<string, unknown>>
> {
  const { $RefParser } = await import('@apidevtools/json-schema-ref-parser');
  return async (document) => {
    dropUnusedIds(document);
    const result = (await new $RefParser().dereference(document, OPTIONS)) as unknown;
    return result as Record<string, unknown>;
  };
}
