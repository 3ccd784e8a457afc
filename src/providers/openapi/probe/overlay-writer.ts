import { stringify } from 'yaml';
import { setKey } from '../../../core/index.js';
import type { NormalizeStep, ProbeFact } from './facts.js';
import { oneLine } from './facts.js';
import type { SchemaLocation } from './targets.js';
import { propertyTarget, schemaTarget } from './targets.js';

/** What the overlay of a probe run is written from. */
export interface ProbeOverlayInput {
  /** The document's title (or location), for the overlay's own title. */
  readonly title: string;
  /** `2026-12-07`: the day of the run, in every piece of evidence. */
  readonly date: string;
  /** The endpoint probed, in every piece of evidence (without credentials). */
  readonly endpoint: string;
  /** The document as written (before `$ref`s are resolved): the targets address it. */
  readonly raw: unknown;
  /** Where each probed type's object schema is. */
  readonly locations: ReadonlyMap<string, SchemaLocation>;
  readonly facts: readonly ProbeFact[];
}

/** One action of the overlay, with the evidence it rests on. */
export interface ProbeAction {
  readonly target: string;
  readonly update: Record<string, unknown>;
  readonly evidence: readonly string[];
}

/**
 * The actions a probe's facts come to (pure): a natural key or a marker identity on the type's
 * schema, `x-tend-immutable` on each field a change in place was refused or ignored for,
 * `x-tend-normalize` on each field the platform rewrote (on the top-level field holding a nested
 * one), `default` on a nested field the platform fills in, `writeOnly` on a field never read back,
 * `x-tend-marker` on the place that kept the marker where the type has no name to try, `x-tend-marker:
 * false` where no candidate kept the marker (whether or not the name is unique), and
 * `x-tend-consistent-reads` on the root when every object was listed at once. Facts that need no
 * annotation (an updatable field, a kept marker on a type with a natural key) and facts whose
 * target the document does not show are returned as notes.
 */
export function probeActions(input: ProbeOverlayInput): {
  actions: ProbeAction[];
  notes: string[];
} {
  const actions = new Map<string, ProbeAction>();
  const notes: string[] = [];
  const add = (target: string | undefined, update: Record<string, unknown>, evidence: string) => {
    if (target === undefined) {
      notes.push(
        `${evidence} (no place in the document to write ${Object.keys(update).join(', ')})`,
      );
      return;
    }
    const known = actions.get(target);
    if (known === undefined) {
      actions.set(target, { target, update: { ...update }, evidence: [evidence] });
      return;
    }
    mergeUpdate(known.update, update);
    (known.evidence as string[]).push(evidence);
  };
  const schemaOf = (type: string) => {
    const at = input.locations.get(type);
    return at === undefined ? undefined : schemaTarget(input.raw, at);
  };
  const propertyOf = (type: string, path: string) => {
    const at = input.locations.get(type);
    return at === undefined ? undefined : propertyTarget(input.raw, at, path);
  };
  const byType = new Map<string, ProbeFact[]>();
  for (const f of input.facts) byType.set(f.type, [...(byType.get(f.type) ?? []), f]);
  for (const [type, facts] of byType) {
    identityActions(type, facts, schemaOf(type), add, notes);
    for (const f of facts) {
      if (f.kind === 'field') {
        if (f.outcome === 'refused' || f.outcome === 'ignored') {
          add(propertyOf(type, f.field), { 'x-tend-immutable': true }, f.evidence);
        } else notes.push(`${type}.${f.field}: ${f.evidence}`);
      } else if (f.kind === 'normalize') {
        const top = f.path.split(/[.[]/)[0]!;
        add(propertyOf(type, top), { 'x-tend-normalize': [...f.ops] }, f.evidence);
      } else if (f.kind === 'default') {
        add(propertyOf(type, f.path), { default: f.value }, f.evidence);
      } else if (f.kind === 'write-only') {
        add(propertyOf(type, f.field), { writeOnly: true }, f.evidence);
      }
    }
  }
  const reads = input.facts.filter((f) => f.kind === 'consistent-reads');
  if (reads.length > 0 && reads.every((f) => f.listedAtOnce)) {
    for (const f of reads)
      add('$', { 'x-tend-consistent-reads': true }, `${f.type}: ${f.evidence}`);
  } else {
    for (const f of reads) notes.push(`${f.type}: ${f.evidence}`);
  }
  return { actions: [...actions.values()], notes };
}

function identityActions(
  type: string,
  facts: readonly ProbeFact[],
  target: string | undefined,
  add: (target: string | undefined, update: Record<string, unknown>, evidence: string) => void,
  notes: string[],
): void {
  const identity = facts.find((f) => f.kind === 'identity');
  const markers = facts.filter((f) => f.kind === 'marker');
  const kept = markers.find((f) => f.kept);
  if (identity?.unique) {
    add(
      target,
      { 'x-tend-identity': 'natural-key', 'x-tend-natural-key': identity.field },
      identity.evidence,
    );
    if (markers.length > 0 && kept === undefined) {
      // Known by its name, but no place keeps the marker where Tend looks: Tend must not write one.
      add(target, { 'x-tend-marker': false }, markers.map((m) => m.evidence).join('; '));
    } else for (const m of markers) notes.push(`${type}.${m.field}: ${m.evidence}`);
    return;
  }
  if (identity !== undefined) notes.push(`${type}.${identity.field}: ${identity.evidence}`);
  if (kept !== undefined) {
    if (identity !== undefined) {
      add(
        target,
        {
          'x-tend-identity': 'marker',
          'x-tend-marker': { field: kept.field, kind: kept.markerKind },
        },
        kept.evidence,
      );
    } else {
      // No name to try a second create with: where the marker goes is the fact.
      add(target, { 'x-tend-marker': { field: kept.field, kind: kept.markerKind } }, kept.evidence);
    }
    for (const m of markers) if (m !== kept) notes.push(`${type}.${m.field}: ${m.evidence}`);
    return;
  }
  if (markers.length > 0) {
    add(target, { 'x-tend-marker': false }, markers.map((m) => m.evidence).join('; '));
  }
}

/** Merges an update into another: `x-tend-normalize` steps are joined (each once, in order). */
function mergeUpdate(into: Record<string, unknown>, update: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(update)) {
    const old = into[k];
    if (k === 'x-tend-normalize' && Array.isArray(old) && Array.isArray(v)) {
      setKey(into, k, [...new Set([...(old as NormalizeStep[]), ...(v as NormalizeStep[])])]);
    } else setKey(into, k, v);
  }
}

/**
 * The OpenAPI Overlay 1.0 YAML of a probe run: each learned fact an action whose description, and
 * a comment above it, give the evidence (`probed 2026-12-07 against http://…: second POST … → 409
 * "…"`); facts that need no annotation are listed as comments at the end. Every piece of text from
 * the platform is one line, quoted.
 */
export function probeOverlay(input: ProbeOverlayInput): string {
  const { actions, notes } = probeActions(input);
  const said = (evidence: string) =>
    oneLineLong(`probed ${input.date} against ${input.endpoint}: ${evidence}`);
  const out: string[] = [
    `# Learned by \`tend providers probe\` from ${oneLine(input.endpoint)} on ${input.date}: each action`,
    '# below is one fact the platform showed, with its evidence. Review it, then use it as an overlay',
    '# (or copy its actions into yours). The vocabulary: docs/onboard-rest-api.md.',
    'overlay: 1.0.0',
    'info:',
    `  title: ${JSON.stringify(oneLine(`Tend overlay probed from ${input.title}`))}`,
    '  version: 0.1.0',
    'actions:',
  ];
  if (actions.length === 0) {
    // An overlay needs one action: this one changes nothing.
    out.push(
      '  - target: $',
      `    description: ${JSON.stringify(said('nothing learned that needs an annotation'))}`,
      '    update: {}',
    );
  }
  for (const a of actions) {
    out.push('');
    for (const e of a.evidence) out.push(`  # ${said(e)}`);
    out.push(`  - target: ${JSON.stringify(a.target)}`);
    out.push(`    description: ${JSON.stringify(a.evidence.map(said).join('; '))}`);
    out.push('    update:');
    for (const line of stringify(a.update).trimEnd().split('\n')) out.push(`      ${line}`);
  }
  if (notes.length > 0) {
    out.push('', '# Also seen (nothing to annotate):');
    for (const n of notes) out.push(`#   ${said(n)}`);
  }
  return `${out.join('\n')}\n`;
}

function oneLineLong(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim();
}
