import type { PolicyVerdict, ResourceTypeInfo } from '../core/index.js';
import { predictedState } from '../core/index.js';
import { evaluatePolicies } from '../policy/index.js';
import { observedVerdicts } from './compliance.js';
import type { PlannedPass } from './planner.js';
import type { Workspace } from './workspace.js';

/**
 * Admission of a plan (docs/policies.md): every policy evaluated on the plan's predicted result of
 * each declared resource — the twin with the plan's steps made in memory (`predictedState`). A
 * value not known before apply makes a rule that reads it `undecidable`, never passed.
 */
export function admitPlan(ws: Workspace, planned: PlannedPass): PolicyVerdict[] {
  const policies = ws.intent.policies ?? [];
  if (policies.length === 0) return [];
  const declared = new Map(ws.intent.resources.map((r) => [r.address, r]));
  const verdicts: PolicyVerdict[] = [];
  for (const step of planned.plan.steps) {
    const r = declared.get(step.address);
    if (!r) continue;
    const observed = planned.observation.objects.get(step.address)?.fields;
    if (step.kind === 'noop' && observed) {
      // Nothing changes: the predicted result is the observed object, whose verdicts continuous
      // compliance keeps (evaluated again only when it or the policies changed).
      for (const v of observedVerdicts(ws, r, observed)?.verdicts ?? []) {
        if (v.result !== 'pass') verdicts.push({ ...v, moment: 'predicted' });
      }
      continue;
    }
    let info: ResourceTypeInfo | undefined;
    try {
      info = ws.typeOf(step.type).info;
    } catch {
      info = undefined;
    }
    const predicted = predictedState(step, observed, r.spec, info);
    if (!predicted) continue;
    for (const v of evaluatePolicies(policies, {
      subject: { address: r.address, type: r.type, name: r.name, labels: r.labels ?? {} },
      moment: 'predicted',
      object: predicted.object,
      unknown: predicted.unknown,
      onlyDeclaredKnown: predicted.onlyKnown,
      declared: r.spec,
      observed: observed ?? null,
    })) {
      verdicts.push(v);
    }
  }
  return verdicts;
}
