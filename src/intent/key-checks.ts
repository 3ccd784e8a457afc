import { LineCounter, isMap, isPair, isScalar, isSeq, parseAllDocuments } from 'yaml';
import type { Node } from 'yaml';
import type { Diagnostic } from '../core/index.js';
import { isForbiddenKey } from '../core/index.js';
import type { PathSegment } from './positions.js';
import { formatPath } from './positions.js';

const FORBIDDEN_HINT =
  'remove or rename the key: Tend refuses `__proto__`, `constructor` and `prototype` as keys anywhere in what it reads (they could reach an object prototype)';

/** What `keyDiagnostics` checks besides keys that could reach a prototype. */
export interface KeyCheckOptions {
  /**
   * Also report a key written twice in one mapping (`yaml.syntax`, as the parser words it). The
   * parser's own check compares every key with every earlier one, so a mapping of 40,000 keys takes
   * a minute; parse with `uniqueKeys: false` and let this linear check do it.
   */
  readonly duplicates?: boolean;
  /** At most this many diagnostics (default 20). */
  readonly limit?: number;
}

/**
 * The key problems of one parsed YAML document, each at its key (file:line:column, field path):
 * every `__proto__`, `constructor` and `prototype` key (`key.forbidden`), and with `duplicates`
 * every key already present in its mapping. Walks the syntax tree without expanding aliases (an
 * anchor is checked where it is written), iteratively and once, so any depth and any number of
 * aliases cost one pass over the text.
 */
export function keyDiagnostics(
  file: string,
  root: unknown,
  lineCounter: LineCounter,
  options: KeyCheckOptions = {},
): Diagnostic[] {
  const limit = options.limit ?? 20;
  const out: Diagnostic[] = [];
  const at = (node: unknown) => lineCounter.linePos((node as Node).range?.[0] ?? 0);
  const stack: { node: unknown; path: PathSegment[] }[] = [{ node: root, path: [] }];
  while (stack.length > 0 && out.length < limit) {
    const { node, path } = stack.pop()!;
    if (!isMap(node) && !isSeq(node)) continue;
    // Scalars hold no keys; an alias points at an anchor checked where it is written.
    const children: { node: unknown; path: PathSegment[] }[] = [];
    const seen = new Set<unknown>();
    node.items.forEach((item: unknown, i) => {
      if (!isPair(item)) {
        children.push({ node: item, path: [...path, i] });
        return;
      }
      const key: unknown = item.key;
      const name = isScalar(key) ? String(key.value) : undefined;
      // A pair inside a flow sequence (`[a: 1]`) is a one-entry mapping at that index.
      const base = isSeq(node) ? [...path, i] : path;
      if (name !== undefined && isForbiddenKey(name)) {
        const pos = at(key);
        out.push({
          code: 'key.forbidden',
          severity: 'error',
          message: `the key \`${name}\` is refused: it could reach an object's prototype`,
          hint: FORBIDDEN_HINT,
          file,
          line: pos.line,
          column: pos.col,
          path: formatPath([...base, name]),
        });
        return;
      }
      if (options.duplicates === true && isMap(node) && isScalar(key)) {
        // The parser's rule: scalar keys with the same value (`a` and "a"; not 1 and "1").
        const value: unknown = key.value;
        if (seen.has(value) && !Number.isNaN(value)) {
          const pos = at(key);
          out.push({
            code: 'yaml.syntax',
            severity: 'error',
            message: 'YAML syntax error: Map keys must be unique',
            hint: 'fix the YAML syntax; nothing else in this document was checked',
            file,
            line: pos.line,
            column: pos.col,
          });
        }
        seen.add(value);
      }
      // Collection keys become strings, but what they hold is input all the same.
      if (key !== null && !isScalar(key)) children.push({ node: key, path: base });
      children.push({ node: item.value, path: [...base, name ?? '<complex key>'] });
    });
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return out.slice(0, limit);
}

/**
 * The keys that could reach a prototype in a YAML (or JSON) file read along with the intent but not
 * an intent file, such as a provider's overlay: every document of `text`, each key at its
 * file:line:column. Syntax errors are left to whatever loads the file.
 */
export function forbiddenKeysInText(file: string, text: string): Diagnostic[] {
  const lineCounter = new LineCounter();
  let docs;
  try {
    docs = parseAllDocuments(text, { lineCounter, uniqueKeys: false });
  } catch {
    return [];
  }
  return docs.flatMap((d) => keyDiagnostics(file, d.contents, lineCounter));
}
