import { parse } from '@marcbachmann/cel-js';
import type { ASTNode, ParseResult } from '@marcbachmann/cel-js';
import { celErrorText } from '../core/index.js';

/**
 * CEL for policies: each expression compiled once per process (a bounded cache keyed by its text)
 * and what it reads of the resource, so that a rule that needs a value not known yet is reported as
 * undecidable instead of passed or failed.
 */

/** An expression ready to run, with what it reads. */
export interface CompiledExpression {
  readonly text: string;
  readonly run: ParseResult;
  /** Top-level fields of `object` it reads; `*` when it uses the object whole. */
  readonly reads: ReadonlySet<string>;
  /** The `variables.<name>` it reads. */
  readonly variables: ReadonlySet<string>;
  /** Identifiers it reads that no macro binds (`object`, `variables`, a misspelt `objet`…). */
  readonly identifiers: ReadonlySet<string>;
}

const MAX_CACHED = 10_000;
const cache = new Map<string, CompiledExpression>();

/** Compiles `text`, or says why it does not parse. Never throws. */
export function compileExpression(text: string): CompiledExpression | { readonly error: string } {
  const hit = cache.get(text);
  if (hit) return hit;
  let run: ParseResult;
  try {
    run = parse(text);
  } catch (e) {
    return { error: celErrorText(e) };
  }
  const reads = new Set<string>();
  const variables = new Set<string>();
  collectReads(run.ast, reads, variables);
  const identifiers = new Set<string>();
  collectIdentifiers(run.ast, new Set(), identifiers);
  const compiled: CompiledExpression = { text, run, reads, variables, identifiers };
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
  cache.set(text, compiled);
  return compiled;
}

/** CEL's macros that bind a variable (`list.filter(k, …)`): the first argument is bound in the rest. */
const BINDING_MACROS: ReadonlySet<string> = new Set([
  'all',
  'exists',
  'exists_one',
  'map',
  'filter',
]);

/** The free identifiers of `node`: every `id` not bound by an enclosing macro. */
function collectIdentifiers(node: ASTNode, bound: ReadonlySet<string>, out: Set<string>): void {
  if (node.op === 'id') {
    if (!bound.has(node.args)) out.add(node.args);
    return;
  }
  if (node.op === 'rcall') {
    const [name, receiver, args] = node.args;
    collectIdentifiers(receiver, bound, out);
    const first = args[0];
    if (BINDING_MACROS.has(name) && first?.op === 'id') {
      const inner = new Set(bound).add(first.args);
      for (const a of args.slice(1)) collectIdentifiers(a, inner, out);
      return;
    }
    for (const a of args) collectIdentifiers(a, bound, out);
    return;
  }
  const args: unknown = node.args;
  if (!Array.isArray(args)) return;
  for (const a of args.flat(2) as unknown[]) {
    if (a !== null && typeof a === 'object' && 'op' in a) {
      collectIdentifiers(a as ASTNode, bound, out);
    }
  }
}

/** The field a `.`/`.?`/`[]` on the identifier `root` names, if the node is one. */
function accessOn(node: ASTNode, root: string): string | undefined {
  if (node.op === '.' || node.op === '.?') {
    const [target, field] = node.args;
    return target.op === 'id' && target.args === root ? field : undefined;
  }
  if (node.op === '[]' || node.op === '[?]') {
    const [target, key] = node.args;
    if (target.op === 'id' && target.args === root) {
      return key.op === 'value' && typeof key.args === 'string' ? key.args : '*';
    }
  }
  return undefined;
}

/** Walks the tree: what of `object` and `variables` it reads. */
function collectReads(node: ASTNode, reads: Set<string>, variables: Set<string>): void {
  const field = accessOn(node, 'object');
  if (field !== undefined) {
    reads.add(field);
    if (node.op === '[]' || node.op === '[?]') collectReads(node.args[1], reads, variables);
    return;
  }
  const variable = accessOn(node, 'variables');
  if (variable !== undefined) {
    variables.add(variable);
    return;
  }
  if (node.op === 'id') {
    if (node.args === 'object') reads.add('*');
    if (node.args === 'variables') variables.add('*');
    return;
  }
  const args: unknown = node.args;
  if (!Array.isArray(args)) return;
  for (const a of args.flat(2) as unknown[]) {
    if (a !== null && typeof a === 'object' && 'op' in a) {
      collectReads(a as ASTNode, reads, variables);
    }
  }
}
