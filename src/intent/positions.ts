import { isMap, isScalar, isSeq } from 'yaml';
import type { Node, Pair, YAMLMap } from 'yaml';
import type { ParsedDocument } from './parse-documents.js';

/** One step of a field path: a mapping key or a list index. */
export type PathSegment = string | number;

/** A 1-based line and column. */
export interface Position {
  readonly line: number;
  readonly column: number;
}

/** Formats a field path the way diagnostics show it: `spec.tags.team`, `checks[0].http.url`. */
export function formatPath(path: readonly PathSegment[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? seg : `.${seg}`;
  }
  return out;
}

/** The pairs of each mapping by key, built once: a search per lookup is quadratic in a wide mapping. */
const pairIndex = new WeakMap<object, Map<string, Pair>>();

function pairsOf(node: YAMLMap): Map<string, Pair> {
  let index = pairIndex.get(node);
  if (index === undefined) {
    index = new Map();
    for (const p of node.items) {
      // The first pair with a key wins, as a search from the start would find it.
      if (isScalar(p.key) && !index.has(String(p.key.value))) index.set(String(p.key.value), p);
    }
    pairIndex.set(node, index);
  }
  return index;
}

function hasRange(
  node: Node | null | undefined,
): node is Node & { range: [number, number, number] } {
  return node?.range !== undefined && node.range !== null;
}

/** True when a node was written (an empty value such as `spec:` has a zero-length range). */
function written(
  node: Node | null | undefined,
): node is Node & { range: [number, number, number] } {
  if (!hasRange(node)) return false;
  if (isScalar(node) && node.value === null && node.range[0] === node.range[1]) return false;
  return true;
}
/**
 * Where a field is written in a document. `key` points at the field's key (for "this field should
 * not be here" problems), `value` at its value (for "this value is wrong"). A path that does not
 * exist in the document resolves to its deepest existing ancestor, so a missing field points at
 * the mapping that should hold it. An empty path is the start of the document.
 */
export function positionOf(
  doc: ParsedDocument,
  path: readonly PathSegment[],
  target: 'key' | 'value' = 'value',
): Position {
  // The start of a document read the fast way is known without its tree.
  if (path.length === 0 && doc.start !== undefined) return doc.start;
  const root = doc.node.contents as Node | null;
  let node: Node | null | undefined = root;
  let key: Node | null | undefined;
  for (const seg of path) {
    if (isMap(node)) {
      const pair = pairsOf(node).get(String(seg));
      if (!pair) break;
      key = pair.key as Node;
      node = pair.value as Node | null;
    } else if (isSeq(node)) {
      const item = node.items[Number(seg)] as Node | undefined;
      if (!item) break;
      key = item;
      node = item;
    } else {
      break;
    }
  }
  let chosen: Node | null | undefined = target === 'key' ? (key ?? node) : node;
  if (!written(chosen)) chosen = written(key) ? key : root;
  const offset = written(chosen) ? chosen.range[0] : 0;
  const pos = doc.lineCounter.linePos(offset);
  return { line: pos.line, column: pos.col };
}
