import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { patchResourceField } from './yaml-patch.js';

// Property: for random files of several documents, written in every scalar and collection style
// with comments, and a random JSON value at a random field of one Resource document, the patch
// (1) reads as the original everywhere except at that one path, which reads as the value;
// (2) keeps every other document byte for byte and every comment line of the file;
// (3) is idempotent: patching the result with the same value changes nothing.

const RUNS = Number(process.env['TEND_FUZZ_RUNS'] ?? 300);

/** A scalar as written in the file. */
const word = fc
  .stringMatching(/^[a-z][a-z0-9.-]{0,8}$/)
  .filter((s) => parse(s) === s && !s.endsWith('.'));
const scalarSource = (): fc.Arbitrary<string> =>
  fc.oneof(
    word,
    fc.integer({ min: -1000, max: 100000 }).map(String),
    fc.boolean().map(String),
    fc
      .string({ unit: fc.constantFrom('a', 'b', ' ', "'", ':', '#', 'é'), maxLength: 8 })
      .map((s) => `'${s.replaceAll("'", "''")}'`),
    // No `${`: a value holding a reference is not the file's to patch ('elsewhere', tested in
    // yaml-patch.test.ts), and this property is about values written in the file.
    fc
      .string({ maxLength: 8 })
      .filter((s) => !s.includes('${'))
      .map((s) => JSON.stringify(s)),
  );
const blockLines = fc.array(fc.stringMatching(/^[a-z][a-z .#:]{0,10}$/), {
  minLength: 1,
  maxLength: 3,
});
const nestedKey = fc.constantFrom('team', 'env', 'owner', 'a b', 'x-y');

/** What a spec field's value looks like in the file. */
type FieldSource =
  | { t: 'scalar'; src: string; comment: boolean }
  | { t: 'block'; lines: string[]; header: '|' | '|-' | '>' }
  | { t: 'flow-seq'; items: string[]; padded: boolean }
  | { t: 'flow-map'; entries: [string, string][]; padded: boolean }
  | { t: 'block-map'; entries: [string, string, boolean][] }
  | { t: 'block-seq'; items: string[]; indented: boolean }
  | { t: 'seq-of-maps'; items: [string, string][][] }
  | { t: 'empty' };

const fieldSource: fc.Arbitrary<FieldSource> = fc.oneof(
  fc.record({ t: fc.constant('scalar' as const), src: scalarSource(), comment: fc.boolean() }),
  fc.record({
    t: fc.constant('block' as const),
    lines: blockLines,
    header: fc.constantFrom('|' as const, '|-' as const, '>' as const),
  }),
  fc.record({
    t: fc.constant('flow-seq' as const),
    items: fc.array(scalarSource(), { maxLength: 3 }),
    padded: fc.boolean(),
  }),
  fc.record({
    t: fc.constant('flow-map' as const),
    entries: fc.uniqueArray(fc.tuple(nestedKey, scalarSource()), {
      maxLength: 3,
      selector: (e) => e[0],
    }),
    padded: fc.boolean(),
  }),
  fc.record({
    t: fc.constant('block-map' as const),
    entries: fc.uniqueArray(fc.tuple(nestedKey, scalarSource(), fc.boolean()), {
      minLength: 1,
      maxLength: 3,
      selector: (e) => e[0],
    }),
  }),
  fc.record({
    t: fc.constant('block-seq' as const),
    items: fc.array(scalarSource(), { minLength: 1, maxLength: 3 }),
    indented: fc.boolean(),
  }),
  fc.record({
    t: fc.constant('seq-of-maps' as const),
    items: fc.array(
      fc.uniqueArray(fc.tuple(nestedKey, scalarSource()), {
        minLength: 1,
        maxLength: 3,
        selector: (e) => e[0],
      }),
      { minLength: 1, maxLength: 2 },
    ),
  }),
  fc.constant({ t: 'empty' as const }),
);

const specKey = fc.constantFrom('name', 'image', 'replicas', 'tags', 'ns', 'note', 'port', 'x');

interface SpecField {
  readonly key: string;
  readonly value: FieldSource;
  /** A comment line before the field. */
  readonly before: boolean;
}

const spec = fc.uniqueArray(fc.record({ key: specKey, value: fieldSource, before: fc.boolean() }), {
  minLength: 1,
  maxLength: 5,
  selector: (f) => f.key,
});

/** Writes a spec; `id` numbers the comments so that each is distinct. */
function writeSpec(fields: readonly SpecField[], id: () => number): string {
  let out = 'spec:\n';
  const inline = (on: boolean) => (on ? ` # inline ${id()}` : '');
  for (const f of fields) {
    if (f.before) out += `  # about ${f.key} ${id()}\n`;
    const v = f.value;
    switch (v.t) {
      case 'scalar':
        out += `  ${f.key}: ${v.src}${inline(v.comment)}\n`;
        break;
      case 'block':
        out += `  ${f.key}: ${v.header}\n${v.lines.map((l) => `    ${l}\n`).join('')}`;
        break;
      case 'flow-seq': {
        const pad = v.padded && v.items.length > 0 ? ' ' : '';
        out += `  ${f.key}: [${pad}${v.items.join(', ')}${pad}]\n`;
        break;
      }
      case 'flow-map': {
        const pad = v.padded && v.entries.length > 0 ? ' ' : '';
        const body = v.entries.map(([k, s]) => `${quoteKey(k)}: ${s}`).join(', ');
        out += `  ${f.key}: {${pad}${body}${pad}}\n`;
        break;
      }
      case 'block-map':
        out += `  ${f.key}:\n`;
        for (const [k, s, c] of v.entries) out += `    ${quoteKey(k)}: ${s}${inline(c)}\n`;
        break;
      case 'block-seq':
        out += `  ${f.key}:\n`;
        for (const s of v.items) out += `${v.indented ? '    ' : '  '}- ${s}\n`;
        break;
      case 'seq-of-maps':
        out += `  ${f.key}:\n`;
        for (const item of v.items) {
          out += item
            .map(([k, x], i) => `${i === 0 ? '    - ' : '      '}${quoteKey(k)}: ${x}\n`)
            .join('');
        }
        break;
      case 'empty':
        out += `  ${f.key}:\n`;
        break;
    }
  }
  return out;
}

function quoteKey(k: string): string {
  return k.includes(' ') ? `"${k}"` : k;
}

/** The paths a patch may aim at in a spec: every field, inside collections, and new ones. */
function pathsOf(fields: readonly SpecField[]): string[][] {
  const out: string[][] = [['fresh'], ['fresh', 'deeper']];
  for (const f of fields) {
    out.push([f.key]);
    const v = f.value;
    if (v.t === 'flow-map' || v.t === 'block-map') {
      for (const [k] of v.entries) out.push([f.key, k]);
      out.push([f.key, 'added']);
    }
    if ((v.t === 'flow-seq' || v.t === 'block-seq') && v.items.length > 0) out.push([f.key, '0']);
    if (v.t === 'seq-of-maps') {
      out.push([f.key, '0']);
      for (const [k] of v.items[0]!) out.push([f.key, '0', k]);
    }
  }
  return out;
}

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
function safeKeys(v: unknown): boolean {
  if (Array.isArray(v)) return v.every(safeKeys);
  if (v !== null && typeof v === 'object') {
    return Object.entries(v).every(([k, x]) => !FORBIDDEN.has(k) && safeKeys(x));
  }
  return true;
}

/** `data` with `value` at `path` (mappings created where missing). */
function setAt(data: unknown, path: readonly string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string, ...string[]];
  if (Array.isArray(data)) {
    const copy = [...(data as unknown[])];
    copy[Number(head)] = setAt(copy[Number(head)], rest, value);
    return copy;
  }
  const base =
    data !== null && typeof data === 'object' ? { ...(data as Record<string, unknown>) } : {};
  return { ...base, [head]: setAt(base[head], rest, value) };
}

const value = fc
  .oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.jsonValue({ maxDepth: 2, stringUnit: 'binary' }),
    fc.string({ unit: fc.constantFrom('a', ' ', '\n', "'", '"', ':', '#', '-', '{', ',') }),
  )
  .filter(safeKeys);

const file = fc.record({
  target: spec,
  others: fc.array(spec, { maxLength: 2 }),
  position: fc.nat(),
  provider: fc.boolean(),
  crlf: fc.boolean(),
  finalBreak: fc.boolean(),
});

describe('patchResourceField (property)', () => {
  it('changes exactly one path, keeps comments and other documents, and is idempotent', () => {
    fc.assert(
      fc.property(
        file.chain((f) =>
          fc.record({
            f: fc.constant(f),
            path: fc.constantFrom(...pathsOf(f.target)),
            value,
          }),
        ),
        ({ f, path, value: v }) => {
          let n = 0;
          const id = () => ++n;
          const docs = f.others.map(
            (s, i) =>
              `# other ${id()}\nkind: Resource\ntype: sb.services\nname: other${i}\n${writeSpec(s, id)}`,
          );
          if (f.provider) docs.unshift(`kind: Provider # the platform ${id()}\nname: sb\n`);
          const target = `kind: Resource\ntype: sb.services\nname: api\n${writeSpec(f.target, id)}checks: [] # ${id()}\n`;
          const at = f.position % (docs.length + 1);
          docs.splice(at, 0, target);
          let text = docs.join('---\n');
          if (!f.finalBreak) text = text.replace(/\n$/, '');
          if (f.crlf) text = text.replaceAll('\n', '\r\n');
          const before = parseAllDocuments(text);
          fc.pre(before.every((d) => d.errors.length === 0));

          const got = patchResourceField(
            text,
            'f.yaml',
            { type: 'sb.services', name: 'api' },
            path.join('.'),
            v,
          );
          expect(['patched', 'unchanged']).toContain(got.kind);
          if (got.kind !== 'patched') return;

          // (1) the same data except at the path.
          const after = parseAllDocuments(got.text);
          expect(after.map((d) => d.errors.length)).toEqual(before.map(() => 0));
          after.forEach((d, i) => {
            const original = before[i]!.toJS() as Record<string, unknown>;
            const want = i === at ? setAt(original, ['spec', ...path], v) : original;
            expect(d.toJS()).toEqual(want);
          });

          // (2) other documents byte for byte, every comment line kept.
          const nl = f.crlf ? '\r\n' : '\n';
          const parts = got.text.split(`${nl}---${nl}`);
          const originals = text.split(`${nl}---${nl}`);
          expect(parts).toHaveLength(originals.length);
          parts.forEach((p, i) => {
            if (i !== at) expect(p).toBe(originals[i]);
          });
          const lines = new Set(got.text.split(nl));
          for (const line of text.split(nl)) {
            if (line.trimStart().startsWith('#')) expect(lines).toContain(line);
          }
          const touched = path[0]!;
          for (const line of text.split(nl)) {
            const m = /^ {2}(\S[^:]*):.* # inline \d+$/.exec(line);
            if (m && m[1] !== touched) expect(lines).toContain(line);
          }

          // (3) idempotent.
          const again = patchResourceField(
            got.text,
            'f.yaml',
            { type: 'sb.services', name: 'api' },
            path.join('.'),
            v,
          );
          expect(again).toEqual({ kind: 'unchanged' });
        },
      ),
      { numRuns: RUNS },
    );
  });
});
