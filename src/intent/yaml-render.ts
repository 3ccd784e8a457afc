import { parse } from 'yaml';

// Rendering values as YAML source for a patch that replaces one node of a file the user wrote
// (yaml-patch.ts). The yaml library's own stringifier renders whole documents in its own style;
// here the style comes from the text being replaced: a single-quoted scalar stays single-quoted,
// a flow collection stays flow, a number stays a plain number. Only JSON-like values are rendered
// (what a platform returns): strings, finite and non-finite numbers, booleans, null, arrays and
// plain objects.

/** Where a rendering goes, for the choices that depend on it. */
export interface RenderContext {
  /** Inside a flow collection (`[…]`, `{…}`): plain scalars may not hold `,[]{}`. */
  readonly flow?: boolean;
  /**
   * Indentation (columns) of the content lines of a block scalar when the original has none to copy,
   * and of the lines after the first of a block collection. Default 2.
   */
  readonly indent?: number;
  /** The file's line break (`\n` or `\r\n`). Default `\n`. */
  readonly newline?: string;
  /** Columns one nesting level adds in block collections. Default 2. */
  readonly unit?: number;
  /** Columns a block sequence under a mapping key is indented by (0 or `unit`). Default `unit`. */
  readonly seqIndent?: number;
}

/** Characters a plain or single-quoted scalar cannot hold (they need a double-quoted escape). */
const NON_PRINTABLE =
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Characters that start an indicator and so cannot start a plain scalar. */
const INDICATOR_START = '[]{},#&*!|>\'"%@`';

function isRecordValue(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** True for values rendered as collections. */
export function isCollectionValue(v: unknown): v is Record<string, unknown> | unknown[] {
  return Array.isArray(v) || isRecordValue(v);
}

/** True for a collection with at least one entry (an empty one is always written `{}` or `[]`). */
export function isNonEmptyCollection(v: unknown): v is Record<string, unknown> | unknown[] {
  return Array.isArray(v) ? v.length > 0 : isRecordValue(v) && Object.keys(v).length > 0;
}

/**
 * True when `s` can be written as a plain (unquoted) scalar and read back as the same string, in
 * block context or, with `flow`, inside a flow collection. Conservative: a string that might be
 * read otherwise (`5`, `true`, `null`, `a: b`, `x #y`) is not plain.
 */
export function plainOk(s: string, flow = false): boolean {
  if (s === '' || s !== s.trim() || NON_PRINTABLE.test(s) || /[\t\r\n]/.test(s)) return false;
  const first = s[0]!;
  if (INDICATOR_START.includes(first)) return false;
  if ('-?:'.includes(first)) {
    const next = s[1];
    if (next === undefined || /\s/.test(next) || (flow && ',[]{}'.includes(next))) return false;
  }
  if (s.includes(': ') || s.includes(' #') || s.endsWith(':')) return false;
  if (flow && /[,[\]{}]/.test(s)) return false;
  if (s === '<<') return false; // a merge key where merges are read
  try {
    return parse(s, { logLevel: 'silent' }) === s;
  } catch {
    return false;
  }
}

/** True when `s` can be written single-quoted (no escapes exist there, and no line breaks wanted). */
function singleOk(s: string): boolean {
  return !NON_PRINTABLE.test(s) && !/[\t\r\n]/.test(s);
}

/** `s` single-quoted: `'` is written `''`. */
export function singleQuoted(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\t': '\\t',
  '\r': '\\r',
};

/** `s` double-quoted, escaping what a double-quoted YAML scalar cannot hold as it is. */
export function doubleQuoted(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    const code = s.charCodeAt(i);
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) {
      out += short;
    } else if (code >= 0xd800 && code <= 0xdbff && i + 1 < s.length) {
      const low = s.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        out += ch + s[i + 1]!;
        i++;
      } else out += `\\u${code.toString(16).padStart(4, '0')}`;
    } else if (NON_PRINTABLE.test(ch)) {
      out += `\\u${code.toString(16).padStart(4, '0')}`;
    } else {
      out += ch;
    }
  }
  return `${out}"`;
}

/** The shortest quoting of a string that needs quotes: single when nothing needs an escape. */
export function quoted(s: string): string {
  return singleOk(s) && !s.includes("'") ? singleQuoted(s) : doubleQuoted(s);
}

/** A number as a plain YAML scalar (core schema): `5`, `1.5`, `1e+21`, `.inf`, `.nan`. */
export function renderNumber(n: number): string {
  if (Number.isNaN(n)) return '.nan';
  if (n === Infinity) return '.inf';
  if (n === -Infinity) return '-.inf';
  return Object.is(n, -0) ? '-0' : String(n);
}

/** A scalar value written inline, plain when it reads back as itself, else quoted. */
function inlineScalar(v: unknown, flow: boolean): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return renderNumber(v);
  if (typeof v === 'string') return plainOk(v, flow) ? v : quoted(v);
  if (typeof v === 'bigint') return v.toString();
  // Anything else (a Date) is written as its JSON text, double-quoted.
  return doubleQuoted(JSON.stringify(v) ?? '');
}

/** A mapping key: plain when possible (and short enough to be an implicit key). */
export function renderKey(key: string, flow: boolean): string {
  return key.length < 1000 && plainOk(key, flow) ? key : quoted(key);
}

/** How a flow collection is padded: `{ a: 1 }` or `{a: 1}`. */
export interface FlowPadding {
  readonly map: boolean;
  readonly seq: boolean;
}

const DEFAULT_PADDING: FlowPadding = { map: true, seq: false };

/** A value in flow style on one line: `{ a: 1, b: [x, y] }`. */
export function renderFlow(value: unknown, padding: FlowPadding = DEFAULT_PADDING): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const pad = padding.seq ? ' ' : '';
    return `[${pad}${value.map((v) => renderFlow(v, padding)).join(', ')}${pad}]`;
  }
  if (isRecordValue(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) return '{}';
    const pad = padding.map ? ' ' : '';
    const body = entries.map(([k, v]) => `${renderKey(k, true)}: ${renderFlow(v, padding)}`);
    return `{${pad}${body.join(', ')}${pad}}`;
  }
  return inlineScalar(value, true);
}

/**
 * A non-empty collection in block style whose first line starts at column `column` (the caller has
 * written what precedes it there); the lines after the first are indented to `column`. No line break
 * after the last line. Empty collections and scalars inside are written inline.
 */
export function renderBlock(
  value: Record<string, unknown> | unknown[],
  column: number,
  context: RenderContext = {},
): string {
  const nl = context.newline ?? '\n';
  const unit = context.unit ?? 2;
  const seqIndent = context.seqIndent ?? unit;
  const pad = (n: number) => ' '.repeat(n);
  if (Array.isArray(value)) {
    return value
      .map((item) =>
        isNonEmptyCollection(item)
          ? `- ${renderBlock(item, column + 2, context)}`
          : `- ${isCollectionValue(item) ? renderFlow(item) : inlineScalar(item, false)}`,
      )
      .join(nl + pad(column));
  }
  return Object.entries(value)
    .map(([k, v]) => {
      const key = renderKey(k, false);
      if (!isNonEmptyCollection(v)) {
        return `${key}: ${isCollectionValue(v) ? renderFlow(v) : inlineScalar(v, false)}`;
      }
      const inner = column + (Array.isArray(v) ? seqIndent : unit);
      return `${key}:${nl}${pad(inner)}${renderBlock(v, inner, context)}`;
    })
    .join(nl + pad(column));
}

type Style = 'plain' | 'single' | 'double' | 'literal' | 'folded' | 'flow-map' | 'flow-seq';

function styleOf(original: string): Style {
  switch (original[0]) {
    case "'":
      return 'single';
    case '"':
      return 'double';
    case '|':
      return 'literal';
    case '>':
      return 'folded';
    case '{':
      return 'flow-map';
    case '[':
      return 'flow-seq';
    default:
      return 'plain';
  }
}

/** The padding a flow collection's source uses, or the default for what it does not show. */
function paddingOf(original: string): FlowPadding {
  const style = styleOf(original);
  if (/^[[{]\s*[\]}]$/.test(original)) return DEFAULT_PADDING;
  const padded = /^[[{][ \t]/.test(original);
  return {
    map: style === 'flow-map' ? padded : DEFAULT_PADDING.map,
    seq: style === 'flow-seq' ? padded : DEFAULT_PADDING.seq,
  };
}

/**
 * A string as a block scalar like `original` (`|`, `|-`, `>`, with its header comment), its content
 * indented as the original's, or undefined when a block scalar cannot hold it (carriage returns,
 * characters that need escapes, a first line that starts with a space, the empty string).
 */
function blockScalar(original: string, value: string, context: RenderContext): string | undefined {
  const nl = context.newline ?? '\n';
  if (value.includes('\r') || NON_PRINTABLE.test(value)) return undefined;
  const trailing = /\n*$/.exec(value)![0].length;
  const content = value.slice(0, value.length - trailing);
  if (content === '') return undefined;
  const lines = content.split('\n');
  if (lines[0] === '' || /^[ \t]/.test(lines[0]!)) return undefined;
  const header = /^[|>][-+0-9]*([ \t]+#[^\r\n]*)?/.exec(original);
  const comment = header?.[1] ?? '';
  const contentLine = original
    .split(/\r?\n/)
    .slice(1)
    .find((l) => l.trim() !== '');
  const indent = contentLine ? /^ */.exec(contentLine)![0].length : (context.indent ?? 2);
  if (indent === 0) return undefined;
  const chomp = trailing === 0 ? '-' : trailing === 1 ? '' : '+';
  // Folding turns single line breaks into spaces: a folded scalar keeps its style only for one line.
  const indicator = styleOf(original) === 'folded' && lines.length === 1 ? '>' : '|';
  const pad = ' '.repeat(indent);
  const body = lines.map((l) => (l === '' ? '' : pad + l)).join(nl);
  return `${indicator}${chomp}${comment}${nl}${body}${nl}${trailing > 1 ? nl.repeat(trailing - 1) : ''}`;
}

/**
 * Renders `value` to replace the scalar or flow collection whose source text is `original`, in the
 * same style where the value allows it:
 * - a plain scalar stays plain, quoted only when the new text would read as something else;
 * - a single- or double-quoted string keeps its quotes (single becomes double only for characters
 *   that need an escape);
 * - a block scalar (`|`, `>`) keeps its header and indentation for a string it can hold;
 * - a flow collection keeps its padding (`{ a: 1 }` or `{a: 1}`);
 * - numbers, booleans and null are plain whatever the original was (the type decides), and a
 *   string that replaces a number is plain when it can be;
 * - a collection that replaces a scalar is written in flow style, on the same line.
 * A block scalar's replacement ends with a line break when the original did (its range includes it).
 */
export function renderScalarLike(
  original: string,
  value: unknown,
  context: RenderContext = {},
): string {
  const style = styleOf(original);
  const flow = context.flow ?? false;
  const block = style === 'literal' || style === 'folded';
  const nl = context.newline ?? '\n';
  const endOfBlock = block && original.endsWith('\n') ? nl : '';
  if (isCollectionValue(value)) return renderFlow(value, paddingOf(original)) + endOfBlock;
  if (typeof value !== 'string') {
    if (value === null && original === '~') return '~';
    return inlineScalar(value, flow) + endOfBlock;
  }
  switch (style) {
    case 'single':
      return singleOk(value) ? singleQuoted(value) : doubleQuoted(value);
    case 'double':
      return doubleQuoted(value);
    case 'literal':
    case 'folded': {
      const text = blockScalar(original, value, context);
      return text ?? (plainOk(value, false) ? value : quoted(value)) + endOfBlock;
    }
    default:
      return plainOk(value, flow) ? value : quoted(value);
  }
}
