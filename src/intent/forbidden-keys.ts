import { LineCounter, isMap, isPair, isScalar, isSeq, parseAllDocuments } from 'yaml';
import type { Node } from 'yaml';
import type { Diagnostic } from '../core/index.js';
import { isForbiddenKey } from '../core/index.js';
import type { PathSegment } from './positions.js';
import { formatPath } from './positions.js';

const HINT =
  'remove or rename the key: Tend refuses `__proto__`, `constructor` and `prototype` as keys anywhere in what it reads (they could reach an object prototype)';

/**
 * Every `__proto__`, `constructor` and `prototype` key in one parsed YAML document, each reported
 * at its key (`key.forbidden`, file:line:column and field path). Walks the syntax tree without
 * expanding aliases (an anchor is checked where it is written), iteratively, so any depth and any
 * number of aliases cost one pass over the text. At most `limit` are reported.
 */
export function forbiddenKeyDiagnostics(
  file: string,
  root: unknown,
  lineCounter: LineCounter,
  limit = 20,
): Diagnostic[] {
  const out: Diagnostic[] = [];
  const stack: { node: unknown; path: PathSegment[] }[] = [{ node: root, path: [] }];
  while (stack.length > 0 && out.length < limit) {
    const { node, path } = stack.pop()!;
    if (isMap(node) || isSeq(node)) {
      const children: { node: unknown; path: PathSegment[] }[] = [];
      node.items.forEach((item: unknown, i) => {
        if (!isPair(item)) {
          children.push({ node: item, path: [...path, i] });
          return;
        }
        const key: unknown = item.key;
        const name = isScalar(key) ? String(key.value) : undefined;
        // A pair inside a flow sequence (`[a: 1]`) is a one-entry mapping at that index.
        const at = isSeq(node) ? [...path, i] : path;
        if (name !== undefined && isForbiddenKey(name)) {
          const pos = lineCounter.linePos((key as Node).range?.[0] ?? 0);
          out.push({
            code: 'key.forbidden',
            severity: 'error',
            message: `the key \`${name}\` is refused: it could reach an object's prototype`,
            hint: HINT,
            file,
            line: pos.line,
            column: pos.col,
            path: formatPath([...at, name]),
          });
          return;
        }
        // Collection keys become strings, but what they hold is input all the same.
        if (key !== null && !isScalar(key)) children.push({ node: key, path: at });
        children.push({ node: item.value, path: [...at, name ?? '<complex key>'] });
      });
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
    }
    // Scalars hold no keys; an alias points at an anchor checked where it is written.
  }
  return out.slice(0, limit);
}

/**
 * The forbidden keys of a YAML (or JSON) file that is not an intent file but is read with it, such
 * as a provider's overlay: every document of `text`, each key at its file:line:column. Syntax errors
 * are left to whatever loads the file.
 */
export function forbiddenKeysInText(file: string, text: string): Diagnostic[] {
  const lineCounter = new LineCounter();
  let docs;
  try {
    docs = parseAllDocuments(text, { lineCounter });
  } catch {
    return [];
  }
  return docs.flatMap((d) => forbiddenKeyDiagnostics(file, d.contents, lineCounter));
}
