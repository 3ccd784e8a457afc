import { parse } from '@marcbachmann/cel-js';
import type { CelCheckDecl, CheckResult } from '../core/index.js';
import { celErrorText } from '../core/index.js';
import type { CheckContext } from './check-context.js';

/** Returns why a CEL expression does not parse, or undefined when it parses. Never throws. */
export function parseCel(expr: string): string | undefined {
  try {
    parse(expr);
    return undefined;
  } catch (e) {
    return celErrorText(e);
  }
}

/** Describes a CEL result for a message: its CEL type and a short rendering of the value. */
function describeValue(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'bigint') return `int ${v}`;
  if (typeof v === 'number') return `double ${v}`;
  if (typeof v === 'string')
    return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 37)}...` : v)}`;
  if (Array.isArray(v)) return `list of ${v.length}`;
  if (typeof v === 'object') return 'map';
  return typeof v;
}

/**
 * Evaluates a CEL check with the variables `observed` and `desired`. It passes only when the result
 * is exactly `true`: `false`, any other value and evaluation errors (a missing field, a type
 * mismatch) fail with a message saying which. References in the expression are substituted first.
 */
export function runCelCheck(check: CelCheckDecl, ctx: CheckContext): CheckResult {
  const result = (ok: boolean, message: string): CheckResult => ({
    name: check.name,
    kind: 'cel',
    ok,
    message,
    at: ctx.now().toISOString(),
  });
  const expr = check.expr.includes('${') ? ctx.resolve(check.expr) : check.expr;
  if (expr === undefined) {
    return result(false, `references in \`${check.expr}\` cannot be resolved yet`);
  }
  let value: unknown;
  try {
    value = parse(expr)({ observed: ctx.observed, desired: ctx.desired }) as unknown;
  } catch (e) {
    return result(false, `\`${expr}\` failed to evaluate: ${celErrorText(e)}`);
  }
  if (value === true) return result(true, `\`${expr}\` is true`);
  if (value === false) return result(false, `\`${expr}\` is false`);
  return result(false, `\`${expr}\` returned ${describeValue(value)}, not a boolean`);
}
