import jsYaml from 'js-yaml';
import type { State } from 'js-yaml';
import { MAX_INPUT_DEPTH, isForbiddenKey } from '../core/index.js';

/**
 * The fast reading of intent files (docs/decisions/0013-fast-yaml-loading.md). The `yaml` package
 * keeps a syntax tree with the position of every node, which is what diagnostics point with; on a
 * large tree it is ten times slower than js-yaml. So a file is read with js-yaml first, and only a
 * file that needs the tree (it has a problem to point at, or uses something the two parsers might
 * read differently) is parsed again with `yaml` (see parse-documents.ts).
 *
 * The fast reading gives a file's documents only when both parsers are known to give the same
 * values. It gives up (returns undefined) on anything else:
 * - js-yaml refuses the file (a syntax error, a duplicate key, an unknown or explicit tag, nesting
 *   deeper than FAST_MAX_DEPTH): the `yaml` parser reports it as it always has;
 * - a directive (`%YAML 1.1` changes the schema), a lone carriage return (a line break to js-yaml,
 *   not to the line counter), `---` or `...` followed by text on its line, a tag, an explicit
 *   key (`? k`), a tab, `#` right after
 *   a quote or bracket, an empty list entry (`- -`, or a null in a list), a quoted or plain
 *   scalar or a flow collection written over several lines (block scalars and collections are
 *   read fast), an anchor (and so any
 *   alias or merge), the non-specific tag `!`, a collection used as a key (each parser writes it
 *   out as a different string: a collection in a mapping that does not follow a `:`, or is
 *   followed by one);
 * - a key that a plain `null`, `~` or empty key may have produced (js-yaml names it "null", `yaml`
 *   ""), a key that could reach a prototype, or a value nested MAX_INPUT_DEPTH deep: the
 *   `yaml` path reports or reads these exactly.
 * Plain scalars resolve through FAST_SCHEMA, a copy of the `yaml` package's YAML 1.2 core schema
 * (same patterns, same conversions), so `yes` is a string, `0o17` is 15 and `2001-12-14` a string.
 */

/** One non-empty document as the fast reading found it. */
export interface FastDocument {
  /** 0-based position among the file's documents, empty ones included. */
  readonly index: number;
  readonly value: unknown;
  /** Offset in the file of the document's content (what `positionOf(doc, [])` points at). */
  readonly offset: number;
  /** 1-based line and column of `offset`, counted as the `yaml` package's LineCounter counts. */
  readonly line: number;
  readonly column: number;
}

/**
 * js-yaml's nesting bound (nodes, keys included). Deeper is left to the `yaml` path, which bounds
 * depth itself (MAX_INPUT_DEPTH values, YAML_LIMITS nodes); js-yaml recurses, and this keeps it far
 * from the stack's end.
 */
export const FAST_MAX_DEPTH = MAX_INPUT_DEPTH + 8;

// The `yaml` package's core schema (yaml/dist/schema/core and common/null.js), in its order. The
// tags are not YAML's own: an explicit `!!int 3` or `!!str x` is then an unknown tag to js-yaml,
// which refuses the file, and `yaml` reads it.
const scalar = (name: string, test: RegExp, construct: (text: string) => unknown): jsYaml.Type =>
  new jsYaml.Type(`tag:tend.dev,2026:fast-${name}`, {
    kind: 'scalar',
    resolve: (data: unknown) => typeof data === 'string' && test.test(data),
    construct: (data: string) => construct(data),
  });

export const FAST_SCHEMA = new jsYaml.Schema({
  implicit: [
    scalar('null', /^(?:~|[Nn]ull|NULL)?$/, () => null),
    scalar('bool', /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/, (s) => s[0] === 't' || s[0] === 'T'),
    scalar('int-oct', /^0o[0-7]+$/, (s) => parseInt(s.substring(2), 8)),
    scalar('int', /^[-+]?[0-9]+$/, (s) => parseInt(s, 10)),
    scalar('int-hex', /^0x[0-9a-fA-F]+$/, (s) => parseInt(s.substring(2), 16)),
    scalar('float-nan', /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/, (s) =>
      s.slice(-3).toLowerCase() === 'nan'
        ? NaN
        : s[0] === '-'
          ? Number.NEGATIVE_INFINITY
          : Number.POSITIVE_INFINITY,
    ),
    scalar('float-exp', /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/, (s) =>
      parseFloat(s),
    ),
    scalar('float', /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/, (s) => parseFloat(s)),
  ],
});

/** What the listener reads of js-yaml's loader state besides the typed fields. */
interface LoaderState extends State {
  readonly depth: number;
  readonly tag: string | null;
  readonly anchorMap: Record<string, unknown>;
}

/** True when, after `from`, the next thing other than blanks and comments is a `:` value indicator. */
function followedByValueIndicator(input: string, from: number): boolean {
  let i = from;
  for (;;) {
    const c = input.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
    else if (c === 0x23 /* # */) {
      while (i < input.length && input.charCodeAt(i) !== 0x0a) i++;
    } else return c === 0x3a; /* : */
  }
}

const SEVERAL = Symbol('several');

/**
 * True when the scalar opened at `from` (maybe before blanks and line breaks) and closed at `to`,
 * with value `result`, is a quoted or plain scalar written over several lines: how far such lines
 * must be indented is where the two parsers part. A quoted one ends at its closing quote; a plain
 * one is its own text unless it spans lines (they fold into spaces). Block scalars (`|`, `>`) span
 * lines by design.
 */
function multiLineFlowScalar(input: string, from: number, to: number, result: unknown): boolean {
  let i = from;
  let c = input.charCodeAt(i);
  while (c === 0x20 || c === 0x0a || c === 0x0d) c = input.charCodeAt(++i);
  if (c === 0x7c /* | */ || c === 0x3e /* > */) return false;
  if (c === 0x22 /* " */ || c === 0x27 /* ' */) {
    const nl = input.indexOf('\n', i);
    return nl !== -1 && nl < to;
  }
  return typeof result === 'string' && !input.startsWith(result, i);
}

/** True when the collection opened at `from` and closed at `to` is a flow one over several lines. */
function multiLineFlowCollection(input: string, from: number, to: number): boolean {
  let i = from;
  let c = input.charCodeAt(i);
  while (c === 0x20 || c === 0x0a || c === 0x0d) c = input.charCodeAt(++i);
  if (c !== 0x5b /* [ */ && c !== 0x7b /* { */) return false;
  const nl = input.indexOf('\n', i);
  return nl !== -1 && nl < to;
}

/** True when a quote or bracket ends right before `at` and a `#` follows it without a blank. */
function commentRunIn(input: string, at: number): boolean {
  if (input.charCodeAt(at) !== 0x23 /* # */) return false;
  const c = input.charCodeAt(at - 1);
  return c === 0x22 || c === 0x27 || c === 0x5d || c === 0x7d; // " ' ] }
}

/** True when, before `at`, the last thing other than blanks and line breaks is a `:`. */
function precededByValueIndicator(input: string, at: number): boolean {
  let i = at - 1;
  for (;;) {
    const c = input.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i--;
    else return c === 0x3a; /* : */
  }
}

/**
 * True when a value read by js-yaml is one the `yaml` path gives the same way: no key that a null
 * key may have produced, no key that could reach a prototype, no object MAX_INPUT_DEPTH deep, no
 * null in a list (an empty entry, after which js-yaml may take in a line `yaml` refuses).
 */
export function plainData(value: unknown): boolean {
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= MAX_INPUT_DEPTH) return false;
    if (Array.isArray(v)) {
      for (const item of v as unknown[]) {
        // An empty list entry: js-yaml may have taken a later, less indented line into its list.
        if (item === null) return false;
        if (typeof item === 'object') {
          values.push(item);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    for (const key of Object.keys(v)) {
      if (key === 'null' || isForbiddenKey(key)) return false;
      const item = (v as Record<string, unknown>)[key];
      if (item !== null && typeof item === 'object') {
        values.push(item);
        depths.push(depth + 1);
      }
    }
  }
  return true;
}

/**
 * Reads every document of an intent file with js-yaml: the non-empty ones, each with where its
 * content starts; or undefined when the file must be read by the `yaml` path (see above).
 */
export function readFast(text: string): FastDocument[] | undefined {
  // Directives; line breaks the two count differently; `---` or `...` run into text (a document
  // marker to js-yaml, a plain scalar to `yaml`); tags (js-yaml drops some on empty nodes);
  // explicit keys (`? [a]` in a flow list makes a mapping the listener does not see); tabs
  // (where they may stand, the two disagree); an empty entry of a compact nested list (`- -`,
  // where js-yaml can take the next line's entry as its own).
  if (
    /^%|\r(?!\n)|^(?:---|\.\.\.)[^\s]|(?:^|[\s[{,])(?:!|\?(?:\s|$))|\t|-[ ]+-[ ]*(?:#.*)?$/m.test(
      text,
    )
  ) {
    return undefined;
  }
  const starts: number[] = [];
  // Per open node: whether it follows a `:` (a value), and the collection children of it that do
  // not (keys, when the node turns out to be a mapping): none, the one, or SEVERAL. js-yaml opens
  // some nodes twice at one place (the outer call gives the inner one's result): a child whose
  // result is the node's own is that same node.
  const isValue: boolean[] = [];
  const collectionKey: unknown[] = [];
  const opened: number[] = [];
  let refused = false;
  const listener = (event: 'open' | 'close', s: State): void => {
    const state = s as LoaderState;
    if (event === 'open') {
      if (state.depth === 1) starts.push(state.position);
      isValue.push(precededByValueIndicator(state.input, state.position));
      opened.push(state.position);
      collectionKey.push(undefined);
      return;
    }
    const value = isValue.pop();
    const keyChild = collectionKey.pop();
    const from = opened.pop()!;
    // A comment run into a closing quote or bracket is an error to `yaml` only.
    if (state.tag === '!' || commentRunIn(state.input, state.position)) {
      refused = true;
    } else if (state.kind === 'scalar') {
      if (multiLineFlowScalar(state.input, from, state.position, state.result)) refused = true;
    } else if (state.kind === 'mapping' || state.kind === 'sequence') {
      const result: unknown = state.result;
      if (multiLineFlowCollection(state.input, from, state.position)) refused = true;
      else if (state.kind === 'mapping' && keyChild !== undefined && keyChild !== result) {
        refused = true;
      } else if (followedByValueIndicator(state.input, state.position)) refused = true;
      const parent = collectionKey.length - 1;
      if (value === false && parent >= 0) {
        collectionKey[parent] = collectionKey[parent] === undefined ? result : SEVERAL;
      }
    }
    if (state.depth === 1) {
      for (const _ in state.anchorMap) {
        refused = true;
        break;
      }
    }
  };
  let values: unknown[];
  try {
    values = jsYaml.loadAll(text, undefined, {
      schema: FAST_SCHEMA,
      listener,
      maxDepth: FAST_MAX_DEPTH,
    } as jsYaml.LoadOptions);
  } catch {
    return undefined;
  }
  if (refused || starts.length !== values.length) return undefined;
  const documents: FastDocument[] = [];
  let line = 1;
  let lineStart = 0;
  let counted = 0;
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    if (value === null || value === undefined) continue;
    if (!plainData(value)) return undefined;
    const offset = starts[index]!;
    for (let nl = text.indexOf('\n', counted); nl !== -1 && nl < offset;) {
      line++;
      lineStart = nl + 1;
      nl = text.indexOf('\n', nl + 1);
    }
    counted = Math.max(counted, offset);
    documents.push({ index, value, offset, line, column: offset - lineStart + 1 });
  }
  return documents;
}
