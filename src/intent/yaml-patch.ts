import { isAlias, isMap, isScalar, isSeq, LineCounter, parseAllDocuments, visit } from 'yaml';
import type { Document, Node, Pair, YAMLMap, YAMLSeq } from 'yaml';
import { isForbiddenKey, setKey, TendError } from '../core/index.js';
import { isRecord } from './fields.js';
import { formatPath } from './positions.js';
import type { RenderContext } from './yaml-render.js';
import {
  isCollectionValue,
  isNonEmptyCollection,
  renderBlock,
  renderFlow,
  renderKey,
  renderScalarLike,
} from './yaml-render.js';

// Accepting drift into code (DESIGN.md §7, `tend accept`): the smallest change to an intent file
// that makes one field of one Resource document declare a given value. The file is edited as text,
// one byte range per node that changes, located through the yaml library's source ranges; nothing
// else is re-serialised, so comments, key order, quoting, anchors and line endings stay byte for
// byte (docs/decisions/0011-yaml-patching.md). Where the value does not live in that document's
// field — a reference, an alias or an anchor shared with other nodes, a merge key, a secret
// reference — nothing is patched: the result says where the change belongs.

/** A place in a file, 1-based. */
export interface PatchLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/** The outcome of patching one field. */
export type PatchResult =
  /** `text` is the whole patched file; `line` the first line that changed (1-based). */
  | { readonly kind: 'patched'; readonly text: string; readonly line: number }
  /** The field already declares the value. */
  | { readonly kind: 'unchanged' }
  /**
   * The value does not live in this field: `reason` says where it comes from, `where` points there
   * when it is in this file. `reference` names the resource field a `${…}` reference reads, for a
   * caller that can point into other files.
   */
  | {
      readonly kind: 'elsewhere';
      readonly reason: string;
      readonly where?: PatchLocation;
      readonly reference?: { readonly address: string; readonly path: string };
    }
  /** No such Resource document in the file, or the path leads through something that is not a mapping. */
  | { readonly kind: 'not-found'; readonly reason: string };

/** Which Resource document: its `type` and `name`. */
export interface ResourceLocator {
  readonly type: string;
  readonly name: string;
}

/**
 * Splits a field path below `spec` into segments: `replicas`, `tags.team`, `ports[0].number` or
 * `ports.0.number`; a leading `spec.` is dropped. Empty segments make the path invalid (undefined).
 */
export function parseFieldPath(fieldPath: string): string[] | undefined {
  const text = fieldPath.startsWith('spec.') ? fieldPath.slice(5) : fieldPath;
  if (text === '' || text === 'spec') return undefined;
  const segments: string[] = [];
  for (const part of text.split('.')) {
    const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) return undefined;
    if (m[1] !== '') segments.push(m[1]!);
    else if (m[2] === '') return undefined;
    for (const index of m[2]!.matchAll(/\[(\d+)\]/g)) segments.push(index[1]!);
  }
  return segments.length > 0 && !segments.some(isForbiddenKey) ? segments : undefined;
}

/** One replacement of a byte range of the text. */
interface Edit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** Stops planning with a result (a value elsewhere, a path that does not lead anywhere). */
class Stop extends Error {
  constructor(readonly result: PatchResult) {
    super(result.kind);
  }
}

/** A node and where it sits: what edits to it need to know. */
interface Slot {
  readonly node: Node | null;
  /** The data the node reads as (from the document's toJS). */
  readonly data: unknown;
  /** Path below `spec`, for messages. */
  readonly path: readonly (string | number)[];
  /** The pair holding the node, when it is a mapping value. */
  readonly pair?: Pair;
  /** Inside a flow collection: plain scalars may not hold `,[]{}`. */
  readonly flow: boolean;
  /** The collections the node is inside, outermost first. */
  readonly ancestors: readonly Node[];
}

type Ranged = Node & { range: [number, number, number] };

function ranged(node: unknown): node is Ranged {
  return (
    node !== null &&
    typeof node === 'object' &&
    Array.isArray((node as { range?: unknown }).range) &&
    (node as { range: unknown[] }).range.length === 3
  );
}

const PARSE_OPTIONS = { uniqueKeys: false, logLevel: 'error' } as const;

/** Planning state for one patch. */
class Planner {
  readonly edits: Edit[] = [];
  readonly newline: string;
  readonly unit: number;
  readonly seqIndent: number;
  /** Anchored nodes some alias points at, with the first alias's offset. */
  readonly aliased = new Map<Node, number>();

  constructor(
    readonly text: string,
    readonly file: string,
    readonly doc: Document.Parsed,
    readonly lines: LineCounter,
  ) {
    this.newline = text.includes('\r\n') ? '\r\n' : '\n';
    visit(doc, {
      Alias: (_key, alias) => {
        const target = alias.resolve(doc);
        if (target && !this.aliased.has(target)) this.aliased.set(target, alias.range?.[0] ?? 0);
      },
    });
    const indents = this.measureIndents();
    this.unit = indents.unit;
    this.seqIndent = indents.seqIndent;
  }

  /** The document's nesting unit and how far block sequences sit under their key (defaults: 2). */
  private measureIndents(): { unit: number; seqIndent: number } {
    let unit: number | undefined;
    let seqIndent: number | undefined;
    visit(this.doc, {
      Pair: (_key, pair) => {
        const key = pair.key;
        const value = pair.value;
        if (!ranged(key) || !ranged(value)) return;
        if (isMap(value) && !value.flow && unit === undefined) {
          const d = this.column(value.range[0]) - this.column(key.range[0]);
          if (d > 0 && this.lineOf(value.range[0]) > this.lineOf(key.range[0])) unit = d;
        }
        if (isSeq(value) && !value.flow && seqIndent === undefined) {
          const d = this.column(value.range[0]) - this.column(key.range[0]);
          if (d >= 0 && this.lineOf(value.range[0]) > this.lineOf(key.range[0])) seqIndent = d;
        }
        return unit !== undefined && seqIndent !== undefined ? visit.BREAK : undefined;
      },
    });
    return { unit: unit ?? 2, seqIndent: seqIndent ?? unit ?? 2 };
  }

  column(offset: number): number {
    return offset - (this.text.lastIndexOf('\n', offset - 1) + 1);
  }

  lineOf(offset: number): number {
    return this.lines.linePos(offset).line;
  }

  at(offset: number): PatchLocation {
    const pos = this.lines.linePos(offset);
    return { file: this.file, line: pos.line, column: pos.col };
  }

  render(flow: boolean, indent: number): RenderContext {
    return {
      flow,
      indent,
      newline: this.newline,
      unit: this.unit,
      seqIndent: this.seqIndent,
    };
  }

  /** Where the anchor `&name` of a node is written (before the node). */
  anchorAt(node: Ranged): PatchLocation {
    const anchor = node.anchor;
    if (anchor) {
      const i = this.text.lastIndexOf(`&${anchor}`, node.range[0]);
      if (i >= 0) return this.at(i);
    }
    return this.at(node.range[0]);
  }

  stop(result: PatchResult): never {
    throw new Stop(result);
  }

  elsewhere(reason: string, where?: PatchLocation, reference?: Reference): never {
    this.stop({
      kind: 'elsewhere',
      reason,
      ...(where ? { where } : {}),
      ...(reference ? { reference } : {}),
    });
  }

  name(path: readonly (string | number)[]): string {
    return formatPath(['spec', ...path]);
  }

  /** Refuses an edit of a node (or inside one) that an alias elsewhere also stands for. */
  guardShared(slot: Slot): void {
    for (const node of [...slot.ancestors, slot.node]) {
      if (!node || !this.aliased.has(node) || !ranged(node)) continue;
      const alias = this.at(this.aliased.get(node)!);
      this.elsewhere(
        `${this.name(slot.path)} is inside the anchor &${node.anchor ?? '?'}, which is also used at line ${alias.line} (*${node.anchor ?? '?'}): changing it here changes every alias; edit the anchor by hand, or write the value out where it differs`,
        this.anchorAt(node),
      );
    }
  }

  /** Refuses replacing or removing a subtree that holds references or anchors used elsewhere. */
  guardSubtree(slot: Slot, node: Node | null): void {
    if (!node) return;
    visit(node, {
      Scalar: (_key, scalar) => {
        if (typeof scalar.value === 'string' && scalar.value.includes('${')) {
          this.elsewhere(
            `${this.name(slot.path)} holds the reference ${JSON.stringify(scalar.value)}: rewriting it would replace the reference with a copy of today's value; edit it by hand`,
            ranged(scalar) ? this.at(scalar.range[0]) : undefined,
          );
        }
      },
      Node: (_key, inner) => {
        if (!this.aliased.has(inner) || !ranged(inner)) return;
        this.elsewhere(
          `${this.name(slot.path)} holds the anchor &${inner.anchor ?? '?'}, which other nodes use (*${inner.anchor ?? '?'}): edit it by hand`,
          this.anchorAt(inner),
        );
      },
    });
  }

  /** Makes `slot` read as `value`, with as few edits as possible. */
  plan(slot: Slot, value: unknown): void {
    if (sameData(slot.data, value)) return;
    const node = slot.node;
    if (isAlias(node)) {
      const target = node.resolve(this.doc);
      this.elsewhere(
        `${this.name(slot.path)} is the alias *${node.source} of the anchor &${node.source}, which other nodes may share: change the anchor, or write the value out here`,
        ranged(target) ? this.anchorAt(target) : undefined,
      );
    }
    this.refuseSecretRef(slot);
    if (isScalar(node) && typeof node.value === 'string' && node.value.includes('${')) {
      this.refuseReference(slot, node.value);
    }
    if (isMap(node) && isRecord(value)) return this.planMap(slot, node, value);
    if (isSeq(node) && Array.isArray(value) && node.items.length === value.length) {
      node.items.forEach((item, i) =>
        this.plan(this.child(slot, item as Node | null, i, undefined), value[i]),
      );
      return;
    }
    this.replace(slot, value);
  }

  refuseSecretRef(slot: Slot): void {
    const node = slot.node;
    if (!isMap(node) || node.items.length !== 1) return;
    const pair = node.items[0]!;
    const key = isScalar(pair.key) ? pair.key.value : undefined;
    if (key !== 'fromEnv' && key !== 'fromFile') return;
    const source = isScalar(pair.value) ? String(pair.value.value) : '?';
    this.elsewhere(
      key === 'fromEnv'
        ? `${this.name(slot.path)} is a secret read from the environment variable ${source}: change the secret where ${source} is set, never in the intent`
        : `${this.name(slot.path)} is a secret read from the file ${source}: change the secret in that file, never in the intent`,
      ranged(node) ? this.at(node.range[0]) : undefined,
    );
  }

  refuseReference(slot: Slot, text: string): void {
    const where = ranged(slot.node) ? this.at(slot.node.range[0]) : undefined;
    const refs = [...text.matchAll(/\$\{([^}]*)\}/g)].map((m) => parseReference(m[1]!));
    const first = refs.find((r) => r !== undefined);
    const whole = /^\$\{[^}]*\}$/.test(text);
    const what = first ? `the field ${first.path} of ${first.address}` : 'another resource';
    this.elsewhere(
      whole
        ? `${this.name(slot.path)} is the reference ${text}: its value is ${what}; change it there`
        : `${this.name(slot.path)} is the template ${JSON.stringify(text)}, built from ${what}; change the template or the resource it reads`,
      where,
      first,
    );
  }

  child(slot: Slot, node: Node | null, key: string | number, pair: Pair | undefined): Slot {
    const data = slot.data;
    const childData: unknown = Array.isArray(data)
      ? (data as unknown[])[Number(key)]
      : isRecord(data)
        ? Object.prototype.hasOwnProperty.call(data, key)
          ? data[String(key)]
          : undefined
        : undefined;
    const parent = slot.node;
    const inFlow = slot.flow || ((isMap(parent) || isSeq(parent)) && parent.flow === true);
    return {
      node,
      data: childData,
      path: [...slot.path, key],
      ...(pair ? { pair } : {}),
      flow: inFlow,
      ancestors: parent ? [...slot.ancestors, parent] : slot.ancestors,
    };
  }

  planMap(slot: Slot, node: YAMLMap, value: Record<string, unknown>): void {
    if (node.items.length === 0) return this.replace(slot, value);
    const explicit = new Map<string, Pair>();
    let merge: Pair | undefined;
    for (const pair of node.items) {
      if (!isScalar(pair.key)) continue;
      const key = String(pair.key.value);
      if (key === '<<') merge = pair;
      else if (!explicit.has(key)) explicit.set(key, pair);
    }
    const removed = [...explicit.keys()].filter(
      (k) => !Object.prototype.hasOwnProperty.call(value, k),
    );
    const added = Object.keys(value).filter((k) => k !== '<<' && !explicit.has(k));
    for (const key of added) {
      const merged = merge && this.fromMerge(merge, key);
      if (merged) this.refuseMerged(slot, key, merged);
    }
    if (removed.length > 0) {
      if (merge) {
        this.elsewhere(
          `${this.name(slot.path)} merges other values (<<): removing ${removed.join(', ')} from it is left to you`,
          ranged(merge.key) ? this.at(merge.key.range[0]) : undefined,
        );
      }
      const lines = node.flow ? undefined : removed.map((k) => this.removal(explicit.get(k)!));
      if (!lines || lines.some((e) => e === undefined) || removed.length === explicit.size) {
        return this.replace(slot, value);
      }
      this.guardShared(slot);
      for (const k of removed) this.guardSubtree(slot, explicit.get(k)!.value as Node | null);
      for (const e of lines) this.edits.push(e!);
    }
    for (const [key, pair] of explicit) {
      if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
      this.plan(this.child(slot, pair.value as Node | null, key, pair), value[key]);
    }
    for (const key of added) {
      if (merge && this.fromMerge(merge, key)) continue; // equal to the merged value
      this.insert(slot, node, key, value[key]);
    }
  }

  /** The pair a merge key (`<<: *base`, `<<: [*a, *b]`) brings in for `key`, if any. */
  fromMerge(merge: Pair, key: string): Pair | undefined {
    const sources: unknown[] = isSeq(merge.value) ? merge.value.items : [merge.value];
    for (const source of sources) {
      const map = isAlias(source) ? source.resolve(this.doc) : source;
      if (!isMap(map)) continue;
      const found = map.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
      if (found) return found;
    }
    return undefined;
  }

  refuseMerged(slot: Slot, key: string, merged: Pair): void {
    this.elsewhere(
      `${this.name([...slot.path, key])} comes from a merge key (<<) of ${this.name(slot.path)}: change it at its source, or write it out here`,
      ranged(merged.key) ? this.at(merged.key.range[0]) : undefined,
    );
  }

  /** The edit removing a block mapping's pair line by line, when the pair starts its own line. */
  removal(pair: Pair): Edit | undefined {
    const key = pair.key;
    if (!ranged(key)) return undefined;
    const lineStart = this.text.lastIndexOf('\n', key.range[0] - 1) + 1;
    if (this.text.slice(lineStart, key.range[0]).trim() !== '') return undefined;
    const value = pair.value;
    const last = Math.max(key.range[1], ranged(value) ? value.range[1] : 0);
    return { start: lineStart, end: this.lineEnd(last), text: '' };
  }

  /** The offset after the line break that ends the line holding offset `at - 1` (a node's end). */
  lineEnd(at: number): number {
    if (at > 0 && this.text[at - 1] === '\n') return at;
    const nl = this.text.indexOf('\n', at);
    return nl === -1 ? this.text.length : nl + 1;
  }

  /** `end` moved back before the line break it follows, if any (`\n` or `\r\n`). */
  beforeBreak(end: number): number {
    if (end === 0 || this.text[end - 1] !== '\n') return end;
    return this.text[end - 2] === '\r' ? end - 2 : end - 1;
  }

  /** Adds `key: value` as the last entry of a mapping. */
  insert(slot: Slot, node: YAMLMap, key: string, value: unknown): void {
    this.guardShared(slot);
    const last = node.items.at(-1);
    if (!last || !ranged(last.key)) return this.replace(slot, addKey(slot.data, key, value));
    const lastValue = last.value;
    const end = Math.max(last.key.range[1], ranged(lastValue) ? lastValue.range[1] : 0);
    if (node.flow) {
      const text = `, ${renderKey(key, true)}: ${renderFlow(value, flowPaddingOf(this.text, node))}`;
      this.edits.push({ start: end, end, text });
      return;
    }
    const column = this.column(last.key.range[0]);
    const offset = this.lineEnd(end);
    const before = offset === this.text.length && !this.text.endsWith('\n') ? this.newline : '';
    const entry = this.blockEntry(key, value, column);
    this.edits.push({ start: offset, end: offset, text: `${before}${entry}${this.newline}` });
  }

  /** `key: value` as a block mapping entry at `column` (indented there), without a line break. */
  blockEntry(key: string, value: unknown, column: number): string {
    const entry: Record<string, unknown> = {};
    setKey(entry, key, value);
    return ' '.repeat(column) + renderBlock(entry, column, this.render(false, column + this.unit));
  }

  /** Replaces the node of `slot` by `value`, keeping its style where the value allows. */
  replace(slot: Slot, value: unknown): void {
    this.guardShared(slot);
    this.guardSubtree(slot, slot.node);
    const node = slot.node;
    const keyColumn = slot.pair && ranged(slot.pair.key) ? this.column(slot.pair.key.range[0]) : 0;
    if (!ranged(node)) {
      this.stop({
        kind: 'not-found',
        reason: `${this.name(slot.path)} has no value in the file to replace`,
      });
    }
    if (isScalar(node) && node.tag !== undefined) {
      this.elsewhere(
        `${this.name(slot.path)} has an explicit tag (${node.tag}): edit it by hand`,
        this.at(node.range[0]),
      );
    }
    const [start, end] = node.range;
    if (isScalar(node) && start === end) return this.fillEmpty(slot, start, keyColumn, value);
    const original = this.text.slice(start, end);
    const flowNode = isScalar(node) || (node as YAMLMap | YAMLSeq).flow === true;
    if (flowNode) {
      const indent = keyColumn + this.unit;
      const text = renderScalarLike(original, value, this.render(slot.flow, indent));
      this.edits.push({ start, end, text });
      return;
    }
    // A block collection.
    const column = this.column(start);
    const lineEnd = this.beforeBreak(end);
    if (isNonEmptyCollection(value)) {
      // A sequence may sit at its key's column; a mapping must be indented further.
      const at =
        !Array.isArray(value) && slot.pair && column <= keyColumn ? keyColumn + this.unit : column;
      const text = ' '.repeat(at - column) + renderBlock(value, at, this.render(false, at));
      this.edits.push({ start, end: lineEnd, text });
      return;
    }
    const inline = isCollectionValue(value) ? renderFlow(value) : renderScalarLike('', value);
    const keyEnd = slot.pair && ranged(slot.pair.key) ? slot.pair.key.range[1] : undefined;
    if (keyEnd !== undefined) {
      const gap = this.text.slice(keyEnd, start);
      const colon = gap.indexOf(':');
      if (colon >= 0 && gap.slice(colon + 1).trim() === '') {
        // `key:` followed by the block on the next lines: the value moves up behind the key.
        this.edits.push({ start: keyEnd + colon + 1, end: lineEnd, text: ` ${inline}` });
        return;
      }
    }
    this.edits.push({ start, end: lineEnd, text: inline });
  }

  /** Writes a value where the file has none (`key:` with nothing after it). */
  fillEmpty(slot: Slot, at: number, keyColumn: number, value: unknown): void {
    if (isNonEmptyCollection(value) && !slot.flow && slot.pair) {
      // `key:` then the collection in block style on the next lines, one level deeper.
      const nl = this.text.indexOf('\n', at);
      const lineEnd = nl === -1 ? this.text.length : this.text[nl - 1] === '\r' ? nl - 1 : nl;
      const column = keyColumn + (Array.isArray(value) ? this.seqIndent : this.unit);
      const text = `${this.newline}${' '.repeat(column)}${renderBlock(value, column, this.render(false, column))}`;
      this.edits.push({ start: lineEnd, end: lineEnd, text });
      return;
    }
    const rendered = renderScalarLike('', value, this.render(slot.flow, keyColumn + this.unit));
    const before = at > 0 && !/\s/.test(this.text[at - 1]!) ? ' ' : '';
    const after = this.text[at] === '#' ? ' ' : '';
    this.edits.push({ start: at, end: at, text: `${before}${rendered}${after}` });
  }
}

/**
 * Equal as data: the same scalars (numbers by value), arrays item by item, mappings key by key
 * whatever their order or prototype.
 */
export function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameData(x, b[i]));
  }
  if (!isRecord(a) || !isRecord(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && sameData(a[k], b[k]));
}

/** A reference `${type/name.path}` split into the resource and the field. */
interface Reference {
  readonly address: string;
  readonly path: string;
}

function parseReference(inner: string): Reference | undefined {
  const slash = inner.indexOf('/');
  const dot = slash < 0 ? -1 : inner.indexOf('.', slash);
  if (dot < 0) return undefined;
  return { address: inner.slice(0, dot), path: inner.slice(dot + 1) };
}

/** The padding an existing flow mapping uses (`{ a: 1 }` or `{a: 1}`). */
function flowPaddingOf(text: string, node: YAMLMap): { map: boolean; seq: boolean } {
  const padded = ranged(node) ? /^\{[ \t]/.test(text.slice(node.range[0])) : true;
  return { map: padded, seq: false };
}

/** `data` (a mapping's data) with `key` added. */
function addKey(data: unknown, key: string, value: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = isRecord(data) ? { ...data } : {};
  setKey(out, key, value);
  return out;
}

/** `{ a: { b: value } }` for the segments `a`, `b`. */
function nest(segments: readonly string[], value: unknown): unknown {
  let out = value;
  for (let i = segments.length - 1; i >= 0; i--) {
    const wrap: Record<string, unknown> = {};
    setKey(wrap, segments[i]!, out);
    out = wrap;
  }
  return out;
}

/** The value at a path of keys and indexes in plain data, or undefined. */
function dataAt(data: unknown, segments: readonly string[]): unknown {
  let cur = data;
  for (const seg of segments) {
    if (Array.isArray(cur)) cur = /^\d+$/.test(seg) ? cur[Number(seg)] : undefined;
    else if (isRecord(cur)) {
      cur = Object.prototype.hasOwnProperty.call(cur, seg) ? cur[seg] : undefined;
    } else return undefined;
  }
  return cur;
}

/** `data` with the value at `segments` set (missing mappings created); a copy along the path. */
function withValue(data: unknown, segments: readonly string[], value: unknown): unknown {
  if (segments.length === 0) return value;
  const [head, ...rest] = segments as [string, ...string[]];
  if (Array.isArray(data) && /^\d+$/.test(head)) {
    const copy = [...(data as unknown[])];
    copy[Number(head)] = withValue(copy[Number(head)], rest, value);
    return copy;
  }
  const copy: Record<string, unknown> = isRecord(data) ? { ...data } : {};
  setKey(copy, head, withValue(isRecord(data) ? data[head] : undefined, rest, value));
  return copy;
}

function toData(doc: Document.Parsed): unknown {
  return doc.toJS({ maxAliasCount: -1 }) as unknown;
}

/** Finds the `kind: Resource` document of `locate` among the file's documents. */
function findDocument(
  docs: readonly Document.Parsed[],
  locate: ResourceLocator,
): { index: number; doc: Document.Parsed; data: Record<string, unknown> } | undefined {
  for (let index = 0; index < docs.length; index++) {
    const doc = docs[index]!;
    if (doc.errors.length > 0 || !isMap(doc.contents)) continue;
    let data: unknown;
    try {
      data = toData(doc);
    } catch {
      continue;
    }
    if (
      isRecord(data) &&
      data['kind'] === 'Resource' &&
      data['type'] === locate.type &&
      data['name'] === locate.name
    ) {
      return { index, doc, data };
    }
  }
  return undefined;
}

function applyEdits(text: string, edits: readonly Edit[]): string {
  // Later edits first; of two at one offset, the one planned later first, so that both end up in
  // the order they were planned.
  const order = edits.map((e, i) => ({ e, i })).sort((a, b) => b.e.start - a.e.start || b.i - a.i);
  let out = text;
  let limit = Infinity;
  for (const { e } of order) {
    if (e.end > limit) throw new TendError('accept.overlap', 'internal: overlapping YAML edits');
    out = out.slice(0, e.start) + e.text + out.slice(e.end);
    limit = e.start;
  }
  return out;
}

/**
 * Where a field of a Resource document is written (its value, or the deepest part of the path that
 * exists), or undefined when the document is not in the text.
 */
export function fieldPosition(
  text: string,
  file: string,
  locate: ResourceLocator,
  fieldPath: string,
): PatchLocation | undefined {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { ...PARSE_OPTIONS, lineCounter: lines });
  const found = findDocument(docs, locate);
  if (!found) return undefined;
  let node: unknown = found.doc.contents;
  let offset = ranged(node) ? node.range[0] : 0;
  for (const seg of ['spec', ...(parseFieldPath(fieldPath) ?? [])]) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === seg);
      if (!pair) break;
      node = pair.value;
    } else if (isSeq(node) && /^\d+$/.test(seg) && Number(seg) < node.items.length) {
      node = node.items[Number(seg)];
    } else break;
    if (ranged(node)) offset = node.range[0];
  }
  const pos = lines.linePos(offset);
  return { file, line: pos.line, column: pos.col };
}

/**
 * The smallest edit of `text` (a YAML file of one or more documents) that makes the field
 * `fieldPath` (below `spec`; a `spec.` prefix is dropped) of the `kind: Resource` document with
 * `locate.type` and `locate.name` read as `value`. Only the byte ranges of the nodes that change are
 * rewritten (docs/decisions/0011-yaml-patching.md):
 * - a scalar keeps its style (renderScalarLike) and any comment after it on the line;
 * - a mapping is edited key by key (changed values, removed entries, new entries last, at the
 *   mapping's indentation), a sequence of the same length item by item; any other collection is
 *   rewritten whole, flow as flow and block as block at its indentation;
 * - a field missing from the spec is added as the last entry of the mapping that should hold it.
 * The patched text is parsed again and must read as the original with only that field changed.
 * Nothing is patched where the value lives elsewhere (`elsewhere`): a `${…}` reference or template,
 * an alias or an anchor other nodes use, a key brought in by a merge key (`<<`), a secret reference.
 * I/O-free: the caller reads and writes the file.
 */
export function patchResourceField(
  text: string,
  file: string,
  locate: ResourceLocator,
  fieldPath: string,
  value: unknown,
): PatchResult {
  const segments = parseFieldPath(fieldPath);
  if (!segments) return { kind: 'not-found', reason: `\`${fieldPath}\` is not a field path` };
  if (value === undefined) return { kind: 'not-found', reason: 'there is no value to accept' };
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { ...PARSE_OPTIONS, lineCounter: lines });
  const found = findDocument(docs, locate);
  if (!found) {
    const broken = docs.some((d) => d.errors.length > 0);
    return {
      kind: 'not-found',
      reason: `${file} has no Resource document of type ${locate.type} named ${locate.name}${broken ? ' (some of its documents have YAML errors)' : ''}`,
    };
  }
  const full = ['spec', ...segments];
  if (sameData(dataAt(found.data, full), value)) return { kind: 'unchanged' };

  const planner = new Planner(text, file, found.doc, lines);
  try {
    walk(planner, found.doc, found.data, segments, value);
  } catch (e) {
    if (e instanceof Stop) return e.result;
    throw e;
  }
  if (planner.edits.length === 0) return { kind: 'unchanged' };
  const patched = applyEdits(text, planner.edits);
  verify(text, patched, found.index, full, value);
  const first = planner.edits.reduce((min, e) => Math.min(min, e.start), Infinity);
  const line = patched.slice(0, first).split('\n').length;
  return { kind: 'patched', text: patched, line };
}

/** Follows `spec.<segments>` from the document's root and plans the edits that set `value`. */
function walk(
  planner: Planner,
  doc: Document.Parsed,
  data: Record<string, unknown>,
  segments: readonly string[],
  value: unknown,
): void {
  const full = ['spec', ...segments];
  let slot: Slot = {
    node: doc.contents,
    data,
    path: [],
    flow: false,
    ancestors: [],
  };
  for (let i = 0; i < full.length; i++) {
    const seg = full[i]!;
    const rest = full.slice(i + 1);
    const node = slot.node;
    const path = i === 0 ? [] : slot.path;
    if (isAlias(node)) return planner.plan(slot, withValue(slot.data, full.slice(i), value));
    if (i > 0) planner.refuseSecretRef(slot);
    if (isScalar(node) && (node.value === null || node.value === undefined) && i > 0) {
      return planner.replace(slot, nest(full.slice(i), value));
    }
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === seg);
      if (pair) {
        const child = planner.child(slot, pair.value as Node | null, seg, pair);
        slot = i === 0 ? { ...child, path: [] } : child;
        continue;
      }
      const merge = node.items.find((p) => isScalar(p.key) && p.key.value === '<<');
      const merged = merge && planner.fromMerge(merge, seg);
      if (merged) planner.refuseMerged({ ...slot, path }, seg, merged);
      return planner.insert({ ...slot, path }, node, seg, nest(rest, value));
    }
    if (isSeq(node) && /^\d+$/.test(seg) && Number(seg) < node.items.length) {
      slot = planner.child(slot, node.items[Number(seg)] as Node | null, Number(seg), undefined);
      continue;
    }
    const what = isSeq(node)
      ? `a list of ${node.items.length} item${node.items.length === 1 ? '' : 's'}`
      : isScalar(node)
        ? `the value ${JSON.stringify(node.value)}`
        : 'not a mapping';
    planner.stop({
      kind: 'not-found',
      reason: `${formatPath(['spec', ...path])} is ${what}: it has no \`${seg}\``,
    });
  }
  planner.plan(slot, value);
}

/**
 * Parses the patched text and checks it reads as the original with only the one field changed: the
 * same documents, none newly broken, and equal data everywhere else. A patch that fails this is a
 * bug, never written.
 */
function verify(
  original: string,
  patched: string,
  index: number,
  full: readonly string[],
  value: unknown,
): void {
  const before = parseAllDocuments(original, PARSE_OPTIONS);
  const after = parseAllDocuments(patched, PARSE_OPTIONS);
  const fail = (why: string): never => {
    throw new TendError(
      'accept.patch_unverified',
      `internal: the patched YAML does not read as intended (${why}); nothing was written`,
      { hint: 'please report this with the document and the value' },
    );
  };
  if (before.length !== after.length) fail('the number of documents changed');
  for (let i = 0; i < before.length; i++) {
    const b = before[i]!;
    const a = after[i]!;
    if (a.errors.length > 0 && b.errors.length === 0) fail(a.errors[0]!.message.split('\n')[0]!);
    if (b.errors.length > 0) continue;
    const expected = i === index ? withValue(toData(b), full, value) : toData(b);
    if (!sameData(toData(a), expected)) {
      fail(i === index ? 'the document reads differently' : `document ${i + 1} changed`);
    }
  }
}
