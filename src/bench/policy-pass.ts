import type { PolicyDecl } from '../core/index.js';
import type { Workspace } from '../engine/index.js';
import type { BenchSandbox } from './bench-sandbox.js';
import type { NoDriftRun } from './no-drift-pass.js';
import { runNoDriftPasses } from './no-drift-pass.js';

/**
 * The cost of policies on a no-drift pass (issue 28): the same converged workspace passed without
 * policies, with 20, and without again, side by side in one run. Each side starts with two passes
 * that are not counted (the first with policies evaluates every resource and writes its compliance
 * into its status; the first without writes the statuses back), then the passes that are.
 */
export interface PolicyPassRun {
  readonly count: number;
  readonly policies: number;
  readonly without: NoDriftRun;
  readonly with: NoDriftRun;
  readonly withoutAgain: NoDriftRun;
  /** Median CPU with policies over the mean of the two medians without, minus one. */
  readonly overhead: number;
}

const at = { file: 'bench-policies.yaml', line: 1, column: 1 };

/** 20 policies over the fixture's networks and buckets: every one matches, none is broken. */
export function benchPolicies(): PolicyDecl[] {
  const rules: [string, string][] = [
    ['sb.networks', 'object.name.startsWith("net-")'],
    ['sb.networks', 'object.cidr.startsWith("10.")'],
    ['sb.networks', 'has(object.tags) && "team" in object.tags'],
    ['sb.networks', 'object.tags.team.startsWith("t")'],
    ['sb.networks', 'object.tags.bench == "yes"'],
    ['sb.networks', 'size(object.name) < 64'],
    ['sb.networks', '!has(object.tags.owner) || object.tags.owner != ""'],
    ['sb.networks', 'object.cidr.endsWith("/24")'],
    ['sb.networks', 'resource.name.startsWith("n-")'],
    ['sb.networks', 'object.name.matches("^net-[0-9]+$")'],
    ['sb.buckets', 'object.name.startsWith("tend-bench-")'],
    ['sb.buckets', 'object.versioning == true || object.versioning == false'],
    ['sb.buckets', 'has(object.tags) && "team" in object.tags'],
    ['sb.buckets', 'object.tags.team.startsWith("t")'],
    ['sb.buckets', 'size(object.name) < 64'],
    ['sb.buckets', 'resource.name.startsWith("b-")'],
    ['sb.buckets', 'object.name.matches("^tend-bench-[0-9]+$")'],
    ['sb.buckets', '!has(object.tags.owner) || object.tags.owner != ""'],
    ['sb.*', 'resource.address.contains("/")'],
    ['sb.*', 'object.name != ""'],
  ];
  return rules.map(([type, expression], i) => ({
    kind: 'Policy',
    name: `bench-${String(i + 1).padStart(2, '0')}`,
    match: { types: [type] },
    variables: [],
    validations: [{ expression, reason: 'Invalid', source: at }],
    actions: i % 3 === 0 ? ['deny'] : i % 3 === 1 ? ['warn'] : ['audit'],
    severity: 'medium',
    source: at,
  }));
}

/** Runs the three sides (`passes` counted passes each) over a converged workspace. */
export async function runPolicyPasses(
  sandbox: BenchSandbox,
  ws: Workspace,
  passes: number,
): Promise<PolicyPassRun> {
  const policies = benchPolicies();
  const bare: Workspace = { ...ws, intent: { ...ws.intent, policies: [] } };
  const governed: Workspace = { ...ws, intent: { ...ws.intent, policies } };
  const side = async (w: Workspace): Promise<NoDriftRun> => {
    await runNoDriftPasses(sandbox, w, 2);
    return runNoDriftPasses(sandbox, w, passes);
  };
  const without = await side(bare);
  const governedRun = await side(governed);
  const withoutAgain = await side(bare);
  const base = (without.median.cpuMs + withoutAgain.median.cpuMs) / 2;
  return {
    count: ws.intent.resources.length,
    policies: policies.length,
    without,
    with: governedRun,
    withoutAgain,
    overhead: governedRun.median.cpuMs / base - 1,
  };
}
