// The torture suite's scenarios: a reduced intent (a network, an instance on it, a stateful volume
// attached to the instance) and four changes to it, one per kind of mutation. Every crash action
// the engine names (CRASH_ACTIONS) maps to the scenario that reaches it, so a new action fails to
// compile here until it has a scenario.
import type { CrashAction } from '../../src/engine/crash-points.js';

/** The shape of the reduced intent; everything else is fixed. */
export interface IntentShape {
  readonly image: string;
  readonly size: 'small' | 'medium';
  readonly volumeSize: number;
  readonly withVolume: boolean;
}

/** The addresses of the reduced intent. */
export const NETWORK = 'sb.networks/main';
export const INSTANCE = 'sb.instances/web';
export const VOLUME = 'sb.volumes/data';

/** The starting point of every scenario that changes something. */
export const BASE: IntentShape = {
  image: 'debian-12',
  size: 'small',
  volumeSize: 20,
  withVolume: true,
};

/** The names of the scenarios. */
export type ScenarioName = 'create' | 'update' | 'replace' | 'shrink' | 'delete';

/** A change to apply while Tend is killed and faults are injected. */
export interface Scenario {
  readonly name: ScenarioName;
  /** What exists before the scenario (applied fault-free); undefined for an empty platform. */
  readonly base: IntentShape | undefined;
  readonly target: IntentShape;
  /** Flags every `tend apply` of the scenario gets. */
  readonly flags: readonly string[];
  /** Per address: the creates the platform's audit feed must show in the whole case (base included). */
  readonly creates: Readonly<Record<string, number>>;
  /** The address whose object is replaced (create-before-destroy), if any. */
  readonly replaced?: string;
  /** The address removed from the intent, if any. */
  readonly removed?: string;
}

/** Every scenario by name. */
export const SCENARIOS: Readonly<Record<ScenarioName, Scenario>> = {
  create: {
    name: 'create',
    base: undefined,
    target: BASE,
    flags: [],
    creates: { [NETWORK]: 1, [INSTANCE]: 1, [VOLUME]: 1 },
  },
  update: {
    name: 'update',
    base: BASE,
    target: { ...BASE, size: 'medium' },
    flags: [],
    creates: { [NETWORK]: 1, [INSTANCE]: 1, [VOLUME]: 1 },
  },
  // A new image cannot be applied in place (the platform's lifecycle endpoint says so): the instance
  // is replaced create-before-destroy, and the volume attached to it must be repointed first.
  replace: {
    name: 'replace',
    base: BASE,
    target: { ...BASE, image: 'debian-13' },
    flags: ['--yes'],
    creates: { [NETWORK]: 1, [INSTANCE]: 2, [VOLUME]: 1 },
    replaced: INSTANCE,
  },
  // Shrinking the stateful volume is a replace that needs --approve-destroy.
  shrink: {
    name: 'shrink',
    base: BASE,
    target: { ...BASE, volumeSize: 10 },
    flags: ['--yes', '--approve-destroy'],
    creates: { [NETWORK]: 1, [INSTANCE]: 1, [VOLUME]: 2 },
    replaced: VOLUME,
  },
  delete: {
    name: 'delete',
    base: BASE,
    target: { ...BASE, withVolume: false },
    flags: ['--yes', '--approve-destroy'],
    creates: { [NETWORK]: 1, [INSTANCE]: 1, [VOLUME]: 1 },
    removed: VOLUME,
  },
};

/** The scenario that reaches each crash action (the record must name every action). */
export const SCENARIO_OF_ACTION: Readonly<Record<CrashAction, ScenarioName>> = {
  create: 'create',
  update: 'update',
  delete: 'delete',
  'replace-create': 'replace',
  'replace-delete': 'replace',
};

/**
 * The reduced intent as YAML, pointing at a sandbox. The provider's request timeout is short by
 * default: a request that never gets an answer (a timeout after success) costs that long.
 */
export function intentYaml(sandboxUrl: string, shape: IntentShape, timeoutMs = 800): string {
  const docs = [
    `kind: Provider
name: sb
type: openapi
spec: ${sandboxUrl}/openapi.json
endpoint: ${sandboxUrl}
timeoutMs: ${timeoutMs}
`,
    `kind: Resource
type: sb.networks
name: main
spec:
  name: main
  cidr: 10.10.0.0/16
`,
    `kind: Resource
type: sb.instances
name: web
spec:
  name: web-1
  network_id: \${sb.networks/main.id}
  size: ${shape.size}
  image: ${shape.image}
`,
  ];
  if (shape.withVolume) {
    docs.push(`kind: Resource
type: sb.volumes
name: data
spec:
  name: web-data
  instance_id: \${sb.instances/web.id}
  size: ${shape.volumeSize}
lifecycle: { stateful: true }
`);
  }
  return docs.join('---\n');
}

/** The addresses an intent shape declares. */
export function declared(shape: IntentShape): string[] {
  return shape.withVolume ? [NETWORK, INSTANCE, VOLUME] : [NETWORK, INSTANCE];
}
