import type { PolicyDecl, PolicyMoment, PolicySubject, PolicyVerdict } from '../core/index.js';
import { celErrorText, defineKey, policyMatches } from '../core/index.js';
import type { CompiledExpression } from './compile.js';
import { compileExpression } from './compile.js';

/** What a rule sees of one resource at one moment. */
export interface PolicyInput {
  readonly subject: PolicySubject;
  readonly moment: PolicyMoment;
  /** The resource's fields at this moment: declared, predicted or observed. */
  readonly object: Readonly<Record<string, unknown>>;
  /**
   * Top-level fields of `object` whose value is not known at this moment (`(known after apply)`,
   * or, on the intent alone, every field it leaves to the platform: then `onlyDeclaredKnown` is set).
   */
  readonly unknown?: ReadonlySet<string>;
  /** On the intent alone: every field not in `object` is unknown. */
  readonly onlyDeclaredKnown?: boolean;
  /** The declared fields (null when the resource is not declared). */
  readonly declared: Readonly<Record<string, unknown>> | null;
  /** The observed fields (null when there is no object on the platform, or not read yet). */
  readonly observed: Readonly<Record<string, unknown>> | null;
}

/** Integers as CEL ints (bigint), so `object.replicas + 1` is int arithmetic; the rest as is. */
export function celValue(v: unknown): unknown {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(celValue);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) defineKey(out, k, celValue(x));
    return out;
  }
  return v;
}

/** A compiled expression, or a throw: the intent reader reported every one that does not compile. */
function compiled(text: string): CompiledExpression {
  const c = compileExpression(text);
  if ('error' in c)
    throw new Error(`internal: a policy expression that does not compile: ${c.error}`);
  return c;
}

/** The unknown fields among `reads` (every read field not declared, on the intent alone). */
function unknownAmong(reads: ReadonlySet<string>, input: PolicyInput): string[] {
  const out: string[] = [];
  for (const f of reads) {
    if (f === '*') {
      if (input.onlyDeclaredKnown || (input.unknown?.size ?? 0) > 0) out.push('*');
      continue;
    }
    const unknown =
      (input.onlyDeclaredKnown === true && !Object.hasOwn(input.object, f)) ||
      (input.unknown?.has(f) ?? false);
    if (unknown) out.push(f);
  }
  return out;
}

/** Why a value is not known at this moment, in the words of the moment. */
function notKnown(fields: readonly string[], input: PolicyInput): string {
  const which = fields.includes('*')
    ? 'the whole object'
    : fields.map((f) => `\`${f}\``).join(', ');
  if (input.moment === 'declared') {
    return `reads ${which}, which the intent does not declare: decided on the plan's predicted result`;
  }
  return `reads ${which}, known only after apply: decided when the platform answers`;
}

/** Text of a CEL value for a message. */
function shown(v: unknown): string {
  return typeof v === 'string'
    ? v
    : JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x));
}

/**
 * Evaluates every policy matching `input.subject` on it: one verdict per rule. A rule passes only
 * when its expression is exactly `true`; `false` is a violation with the rule's message; any other
 * value or an evaluation error is an `error`; a rule reading a value not known at this moment is
 * `undecidable`. Variables are evaluated in order, each seeing the ones before it.
 */
export function evaluatePolicies(
  policies: readonly PolicyDecl[],
  input: PolicyInput,
): PolicyVerdict[] {
  const verdicts: PolicyVerdict[] = [];
  let context: Record<string, unknown> | undefined;
  for (const policy of policies) {
    if (!policyMatches(policy.match, input.subject)) continue;
    context ??= {
      object: celValue(input.object),
      declared: input.declared === null ? null : celValue(input.declared),
      observed: input.observed === null ? null : celValue(input.observed),
      resource: celValue({
        address: input.subject.address,
        type: input.subject.type,
        name: input.subject.name,
        labels: input.subject.labels,
      }),
    };
    // Variables: each value, or why it has none; and every field each reads, through the ones before.
    const values: Record<string, unknown> = {};
    const failed = new Map<string, string>();
    const reads = new Map<string, Set<string>>();
    for (const v of policy.variables) {
      const c = compiled(v.expression);
      const all = new Set(c.reads);
      for (const used of c.variables) for (const f of reads.get(used) ?? []) all.add(f);
      reads.set(v.name, all);
      const before = [...c.variables].find((u) => failed.has(u));
      if (before !== undefined) {
        failed.set(v.name, failed.get(before)!);
        continue;
      }
      if (unknownAmong(all, input).length > 0) continue;
      try {
        defineKey(values, v.name, c.run({ ...context, variables: values }) as unknown);
      } catch (e) {
        failed.set(v.name, `variable ${v.name}: ${celErrorText(e)}`);
      }
    }
    policy.validations.forEach((rule, index) => {
      const c = compiled(rule.expression);
      const all = new Set(c.reads);
      for (const used of c.variables) {
        for (const f of used === '*'
          ? [...reads.values()].flatMap((s) => [...s])
          : (reads.get(used) ?? [])) {
          all.add(f);
        }
      }
      const verdict = (result: PolicyVerdict['result'], message: string): void => {
        verdicts.push({
          policy: policy.name,
          rule: index,
          address: input.subject.address,
          moment: input.moment,
          result,
          message,
          reason: rule.reason,
          actions: policy.actions,
          severity: policy.severity,
          fields: [...all].sort(),
          source: rule.source,
        });
      };
      const unknown = unknownAmong(all, input);
      if (unknown.length > 0) return verdict('undecidable', notKnown(unknown, input));
      const broken = [...c.variables].find((u) => failed.has(u));
      if (broken !== undefined) return verdict('error', failed.get(broken)!);
      const scope = { ...context, variables: values };
      let value: unknown;
      try {
        value = c.run(scope);
      } catch (e) {
        return verdict('error', `\`${rule.expression}\` failed: ${celErrorText(e)}`);
      }
      if (value === true) return verdict('pass', `\`${rule.expression}\` is true`);
      if (value !== false) {
        return verdict('error', `\`${rule.expression}\` returned ${shown(value)}, not a boolean`);
      }
      verdict('fail', failMessage(rule, scope));
    });
  }
  return verdicts;
}

/** The message of a violated rule: its messageExpression's string, else its message, else the expression. */
function failMessage(
  rule: PolicyDecl['validations'][number],
  scope: Record<string, unknown>,
): string {
  if (rule.messageExpression !== undefined) {
    try {
      const m: unknown = compiled(rule.messageExpression).run(scope);
      if (typeof m === 'string' && m.trim() !== '') return m;
    } catch {
      // As in Kubernetes: a messageExpression that fails falls back to the message.
    }
  }
  return rule.message ?? `\`${rule.expression}\` is false`;
}
