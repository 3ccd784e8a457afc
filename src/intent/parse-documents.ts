import { LineCounter, isScalar, parseAllDocuments } from 'yaml';
import type { Document } from 'yaml';
import type { Diagnostic, YamlProblem } from '../core/index.js';
import { checkYamlDocument, MAX_INPUT_DEPTH, shapeProblems } from '../core/index.js';
import { readFast } from './fast-yaml.js';
import type { FastDocument } from './fast-yaml.js';
import { keyDiagnostics } from './key-checks.js';
import { formatPath, positionOf } from './positions.js';
import type { Position } from './positions.js';

/** One non-empty YAML document of an intent file, with what is needed to point back into it. */
export interface ParsedDocument {
  /** The file path, joined from the intent directory. */
  readonly file: string;
  /** 0-based position of the document in its file. */
  readonly index: number;
  /**
   * The document's syntax tree. For a document read the fast way (fast-yaml.ts) it is built when
   * first asked for, by parsing its file again: only diagnostics and field positions ask.
   */
  readonly node: Document.Parsed;
  /** Maps offsets of the whole file to lines and columns (built with `node`). */
  readonly lineCounter: LineCounter;
  /** The document as plain data. */
  readonly value: unknown;
  /** Where the document's content starts, when known without the tree (`positionOf(doc, [])`). */
  readonly start?: Position;
}

/** The options every intent file is parsed with by the position-keeping `yaml` parser. */
const PARSE_OPTIONS = {
  prettyErrors: true,
  // uniqueKeys: the parser's duplicate-key check is quadratic in a mapping's size;
  // checkYamlDocument finds duplicates in linear time, and bounds depth and aliases.
  uniqueKeys: false,
  // Warnings (a collection used as a key) would go to stderr; the text's problems are diagnostics.
  logLevel: 'error',
} as const;

/** A file read the fast way, parsed again by `yaml` the first time one of its trees is asked for. */
class LazyTrees {
  private parsed?: {
    docs: Document.Parsed[];
    byStart: Map<number, Document.Parsed>;
    lineCounter: LineCounter;
  };
  constructor(private readonly text: string) {}

  get lineCounter(): LineCounter {
    return this.parse().lineCounter;
  }

  /** The tree of the document whose content starts at `offset` (the fast reading's own start). */
  tree(offset: number, index: number): Document.Parsed {
    const { docs, byStart } = this.parse();
    const found = byStart.get(offset) ?? docs[index];
    if (!found) throw new Error('internal: a fast-read document has no syntax tree');
    return found;
  }

  private parse(): {
    docs: Document.Parsed[];
    byStart: Map<number, Document.Parsed>;
    lineCounter: LineCounter;
  } {
    if (!this.parsed) {
      const lineCounter = new LineCounter();
      const docs = Array.from(parseAllDocuments(this.text, { lineCounter, ...PARSE_OPTIONS }));
      const byStart = new Map<number, Document.Parsed>();
      for (const d of docs) {
        const start = d.contents?.range[0];
        if (start !== undefined && !byStart.has(start)) byStart.set(start, d);
      }
      this.parsed = { docs, byStart, lineCounter };
    }
    return this.parsed;
  }
}

/** A document read the fast way: value and start now, tree on demand. */
class FastParsedDocument implements ParsedDocument {
  readonly index: number;
  readonly value: unknown;
  readonly start: Position;
  private readonly offset: number;
  constructor(
    readonly file: string,
    fast: FastDocument,
    private readonly trees: LazyTrees,
  ) {
    this.index = fast.index;
    this.value = fast.value;
    this.offset = fast.offset;
    this.start = { line: fast.line, column: fast.column };
  }

  get node(): Document.Parsed {
    return this.trees.tree(this.offset, this.index);
  }

  get lineCounter(): LineCounter {
    return this.trees.lineCounter;
  }
}

/**
 * Syntax errors reported per file: a broken indentation can make every later line an error, and a
 * hundred thousand diagnostics help nobody (nor does the memory they take).
 */
const MAX_SYNTAX_ERRORS = 20;

/** What each shape problem of a parsed document is reported as. */
const SHAPE_PROBLEMS = {
  // A key written as an alias of a scalar anchor (`*k: v`) is only known once aliases resolve.
  'forbidden-key': {
    code: 'key.forbidden',
    message:
      "this key is `__proto__`, `constructor` or `prototype`, which is refused: it could reach an object's prototype",
    hint: 'remove or rename the key',
  },
  'too-deep': {
    code: 'yaml.too_deep',
    message: `values are nested more than ${MAX_INPUT_DEPTH} levels deep here`,
    hint: 'flatten the structure; no resource needs this depth',
  },
  cycle: {
    code: 'yaml.cycle',
    message: 'this value contains itself (an alias inside its own anchor)',
    hint: 'an alias may only point at an anchor outside it',
  },
} as const;

/** The first line of a yaml error message, without the " at line L, column C" the diagnostic carries anyway. */
function summary(message: string): string {
  const first = message.split('\n')[0] ?? message;
  const text = first.replace(/ at line \d+, column \d+:?$/, '').replace(/:$/, '');
  // The parser reports its own stack overflow on deeply nested flow collections as a syntax error.
  return /call stack/i.test(text) ? 'nested too deeply to read' : text;
}

const LIMIT_HINTS: Record<YamlProblem['kind'], string> = {
  'duplicate-key': 'fix the YAML syntax',
  'too-deep': 'flatten the value',
  'too-many-aliases': 'write the values out instead of using so many anchors and aliases',
  'alias-expansion': 'write the values out instead of aliasing aliases',
  'alias-loop': 'an alias cannot stand for a value that contains it',
  'alias-unknown': 'set the anchor (&name) before the alias (*name) that uses it',
};

/**
 * Splits a file into its YAML documents. Syntax errors become `yaml.syntax` diagnostics with the
 * parser's position, and the broken document is left out (checking it further would only add noise).
 * So is a document that is hostile rather than wrong: a `__proto__`, `constructor` or `prototype`
 * key anywhere (`key.forbidden`, at the key), values nested deeper than MAX_INPUT_DEPTH
 * (`yaml.too_deep`), an alias inside its own anchor (`yaml.cycle`), and aliases that would expand
 * too far or point at nothing (`yaml.alias`). What comes out is plain, acyclic, shallow data that
 * nothing downstream can use to reach a prototype or overflow the stack. A key written twice in a
 * mapping is a `yaml.syntax` error too, found in one pass (the parser's own check is quadratic).
 * Empty documents (`---` alone, comments only) are skipped silently.
 */
export function parseDocuments(
  file: string,
  text: string,
): { documents: ParsedDocument[]; diagnostics: Diagnostic[] } {
  // Most files are read the fast way; the others, and every file with a problem, by `yaml`.
  const fast = readFast(text);
  if (fast !== undefined) return { documents: fastDocuments(file, text, fast), diagnostics: [] };
  return parseWithPositions(file, text);
}

/**
 * The documents of a file the fast reading accepted (`fast`, for this `text`): values now, syntax
 * trees — for positions — from parsing the text again when first asked for.
 */
export function fastDocuments(
  file: string,
  text: string,
  fast: readonly FastDocument[],
): ParsedDocument[] {
  const trees = new LazyTrees(text);
  return fast.map((d) => new FastParsedDocument(file, d, trees));
}

/**
 * parseDocuments with the position-keeping `yaml` parser: what every file went through before the
 * fast reading, and what reports every problem.
 */
export function parseWithPositions(
  file: string,
  text: string,
): { documents: ParsedDocument[]; diagnostics: Diagnostic[] } {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter, ...PARSE_OPTIONS });
  const documents: ParsedDocument[] = [];
  const diagnostics: Diagnostic[] = [];
  // parseAllDocuments returns an EmptyStream (an empty array) for a file without documents.
  let syntaxErrors = 0;
  docs.forEach((node, index) => {
    if (node.errors.length > 0) {
      for (const e of node.errors) {
        const pos = e.linePos?.[0] ?? lineCounter.linePos(e.pos[0]);
        if (++syntaxErrors > MAX_SYNTAX_ERRORS) {
          if (syntaxErrors === MAX_SYNTAX_ERRORS + 1) {
            diagnostics.push({
              code: 'yaml.syntax',
              severity: 'error',
              message: `more YAML syntax errors from here on are not shown (the first ${MAX_SYNTAX_ERRORS} are)`,
              hint: 'fix the errors above first; later ones often follow from them',
              file,
              line: pos.line,
              column: pos.col,
            });
          }
          continue;
        }
        diagnostics.push({
          code: 'yaml.syntax',
          severity: 'error',
          message: `YAML syntax error: ${summary(e.message)}`,
          hint: 'fix the YAML syntax; nothing else in this document was checked',
          file,
          line: pos.line,
          column: pos.col,
        });
      }
      return;
    }
    const contents = node.contents;
    if (contents === null || (isScalar(contents) && contents.value === null)) return;
    const problems = checkYamlDocument(node);
    for (const p of problems) {
      const pos = lineCounter.linePos(p.offset);
      diagnostics.push({
        code: p.kind === 'duplicate-key' ? 'yaml.syntax' : 'yaml.limit',
        severity: 'error',
        message:
          p.kind === 'duplicate-key'
            ? `YAML syntax error: ${p.message}`
            : `YAML document refused: ${p.message}`,
        hint: `${LIMIT_HINTS[p.kind]}; nothing else in this document was checked`,
        file,
        line: pos.line,
        column: pos.col,
      });
    }
    if (problems.length > 0) return;
    // Keys that could reach a prototype (duplicates were found above).
    const keys = keyDiagnostics(file, contents, lineCounter, { duplicates: false });
    if (keys.length > 0) {
      for (const d of keys) diagnostics.push(d);
      return;
    }
    // The aliases are bounded above; the package's own bound (maxAliasCount) is quadratic.
    const value = node.toJS({ maxAliasCount: -1 }) as unknown;
    const doc: ParsedDocument = { file, index, node, lineCounter, value };
    const shape = shapeProblems(value, { maxDepth: MAX_INPUT_DEPTH, limit: 1 });
    for (const problem of shape) {
      const pos = positionOf(doc, problem.path);
      diagnostics.push({
        ...SHAPE_PROBLEMS[problem.kind],
        severity: 'error',
        file,
        line: pos.line,
        column: pos.column,
        ...(problem.path.length > 0 && { path: formatPath(problem.path) }),
      });
    }
    if (shape.length === 0) documents.push(doc);
  });
  return { documents, diagnostics };
}
