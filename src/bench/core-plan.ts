import type { Address, LifecycleEvaluation, Plan, PlanStep } from '../core/index.js';
import {
  assemblePlan,
  decideStep,
  diffDeclared,
  getPath,
  resolveReferences,
  topoOrder,
} from '../core/index.js';
import type { PlanFixture } from './plan-fixture.js';

/**
 * The pure core of planning, without the engine around it: in reference order, resolve references
 * (`resolveReferences`), diff declared fields (`diffDeclared`), decide the step (`decideStep`, with the
 * sandbox's lifecycle rule evaluated in memory), then `assemblePlan`. The difference between this and
 * `planPass` on the same fixture is the engine's own overhead.
 */
export function corePlan(fixture: PlanFixture): Plan {
  const { ws, observation } = fixture;
  const resources = ws.intent.resources;
  const decls = new Map(resources.map((r) => [r.address, r] as const));
  const ordered = topoOrder(new Map(resources.map((r) => [r.address, r.dependsOn] as const)));
  if (ordered.kind !== 'ordered') throw new Error('the plan fixture has a cycle');
  const steps = new Map<Address, PlanStep>();
  for (const address of ordered.order) {
    const decl = decls.get(address)!;
    const desired = resolveReferences(decl.spec, (target, path) => {
      const s = steps.get(target);
      if (s && (s.kind === 'create' || s.kind === 'replace')) return undefined;
      const o = observation.objects.get(target);
      const v = o === undefined ? undefined : getPath(o.fields, path);
      return v === undefined ? undefined : { value: v };
    }) as Record<string, unknown>;
    const observed = observation.objects.get(address);
    const changes = observed ? diffDeclared(desired, observed.fields) : [];
    let evaluation: LifecycleEvaluation | undefined;
    if (observed && changes.length > 0) {
      const cidr = changes.some((c) => c.path === 'cidr');
      evaluation = cidr
        ? { action: 'replace', fields: ['cidr'], source: 'platform' }
        : { action: 'update', fields: changes.map((c) => c.path), source: 'platform' };
    }
    steps.set(
      address,
      decideStep({
        address,
        type: decl.type,
        dependsOn: decl.dependsOn,
        stateful: decl.lifecycle.stateful,
        objectId: observed?.id,
        desired,
        changes,
        ...(evaluation ? { evaluation } : {}),
        canCreateBeforeDestroy: true,
        approveDestroy: false,
      }),
    );
  }
  return assemblePlan([...steps.values()], observation.removed, false);
}
