import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as Core from '../../src/core/index.js';
import type * as Providers from '../../src/providers/index.js';
import { copyExample, runCli } from '../support/cli.js';
import { startSandboxProcess, type SandboxHandle } from '../support/sandbox-process.js';

// Issue 28, item 7: the plan's predicted result of a resource (`predictedState`, docs/policies.md) is
// what the platform holds once the plan is applied. For random intents over three sandbox types
// (networks, services, buckets: declared subsets of their fields, values, creates, updates of
// objects an earlier apply made, replaces of create-only fields, deletes), each run:
//
//   1. `tend apply` of a first intent (the objects that exist before);
//   2. `tend plan --json` of a second intent, and the observed objects read from the sandbox;
//   3. the predicted result of every step, computed with the built `predictedState` from the
//      plan's step, that observed object, the declared fields and the type's info;
//   4. `tend apply` of the second intent, the objects read back:
//
// every field the prediction knows equals the object after apply; a field it marks unknown
// (`(known after apply)`, or every field it does not list for a create) is skipped and counted.
// Everything runs against a real `tend sandbox` process through the built `tend` (`npm run build`).

const dist = (p: string) => fileURLToPath(new URL(`../../dist/${p}`, import.meta.url));
const core = (await import(dist('core/index.js'))) as typeof Core;
const providers = (await import(dist('providers/index.js'))) as typeof Providers;

// ---- the intents ---------------------------------------------------------------------------

type Tags = Record<string, string>;
interface NetworkDecl {
  cidr: string;
  tags?: Tags;
}
interface ServiceDecl {
  image: string;
  replicas?: number;
  onNetwork: boolean;
  tags?: Tags;
}
interface BucketDecl {
  name: string;
  versioning?: boolean;
  tags?: Tags;
}
/** One intent: each resource declared or not (null). */
interface IntentCase {
  network: NetworkDecl | null;
  service: ServiceDecl | null;
  bucket: BucketDecl | null;
}

// A small key and value space, so that the second intent often meets what the first one made. No
// key with a dot in it: a change to one is refused at apply (see the last test below).
const tags: fc.Arbitrary<Tags> = fc.dictionary(
  fc.constantFrom('team', 'env'),
  fc.constantFrom('a', 'b', ''),
  { maxKeys: 3 },
);

const network: fc.Arbitrary<NetworkDecl> = fc.record(
  { cidr: fc.constantFrom('10.1.0.0/16', '10.2.0.0/16'), tags: tags },
  { requiredKeys: ['cidr'] },
);
const service: fc.Arbitrary<ServiceDecl> = fc.record(
  {
    image: fc.constantFrom('nginx:1.27', 'nginx:1.28'),
    replicas: fc.integer({ min: 0, max: 3 }),
    onNetwork: fc.boolean(),
    tags: tags,
  },
  { requiredKeys: ['image', 'onNetwork'] },
);
const bucket: fc.Arbitrary<BucketDecl> = fc.record(
  {
    name: fc.constantFrom('prop-bucket-a', 'prop-bucket-b'), // the name is create-only: a replace
    versioning: fc.boolean(),
    tags: tags,
  },
  { requiredKeys: ['name'] },
);
const intent: fc.Arbitrary<IntentCase> = fc
  .record({
    network: fc.option(network, { nil: null }),
    service: fc.option(service, { nil: null }),
    bucket: fc.option(bucket, { nil: null }),
  })
  // A service on the network only when the network is declared (else the reference cannot resolve).
  .map((i) =>
    i.service && i.service.onNetwork && !i.network
      ? { ...i, service: { ...i.service, onNetwork: false } }
      : i,
  );

const yamlTags = (t: Tags | undefined) =>
  t === undefined
    ? []
    : [
        `  tags: {${Object.entries(t)
          .map(([k, v]) => ` ${JSON.stringify(k)}: ${JSON.stringify(v)}`)
          .join(',')} }`,
      ];

/** The intent as YAML (also what a shrunk counterexample shows). */
function toYaml(i: IntentCase): string {
  const docs: string[] = [];
  if (i.network) {
    docs.push(
      [
        'kind: Resource',
        'type: sb.networks',
        'name: main',
        'spec:',
        '  name: main',
        `  cidr: ${i.network.cidr}`,
        ...yamlTags(i.network.tags),
      ].join('\n'),
    );
  }
  if (i.service) {
    docs.push(
      [
        'kind: Resource',
        'type: sb.services',
        'name: api',
        'spec:',
        '  name: api',
        `  image: ${JSON.stringify(i.service.image)}`,
        ...(i.service.replicas === undefined ? [] : [`  replicas: ${i.service.replicas}`]),
        ...(i.service.onNetwork ? ['  network_id: ${sb.networks/main.id}'] : []),
        ...yamlTags(i.service.tags),
      ].join('\n'),
    );
  }
  if (i.bucket) {
    docs.push(
      [
        'kind: Resource',
        'type: sb.buckets',
        'name: assets',
        'spec:',
        `  name: ${i.bucket.name}`,
        ...(i.bucket.versioning === undefined ? [] : [`  versioning: ${i.bucket.versioning}`]),
        ...yamlTags(i.bucket.tags),
      ].join('\n'),
    );
  }
  return docs.join('\n---\n') + '\n';
}

/** The declared fields of each address, as Tend reads them (references left as written). */
function declaredOf(i: IntentCase): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  const withTags = (o: Record<string, unknown>, t: Tags | undefined) =>
    t === undefined ? o : { ...o, tags: t };
  if (i.network) {
    out.set('sb.networks/main', withTags({ name: 'main', cidr: i.network.cidr }, i.network.tags));
  }
  if (i.service) {
    out.set(
      'sb.services/api',
      withTags(
        {
          name: 'api',
          image: i.service.image,
          ...(i.service.replicas === undefined ? {} : { replicas: i.service.replicas }),
          ...(i.service.onNetwork ? { network_id: '${sb.networks/main.id}' } : {}),
        },
        i.service.tags,
      ),
    );
  }
  if (i.bucket) {
    out.set(
      'sb.buckets/assets',
      withTags(
        {
          name: i.bucket.name,
          ...(i.bucket.versioning === undefined ? {} : { versioning: i.bucket.versioning }),
        },
        i.bucket.tags,
      ),
    );
  }
  return out;
}

// ---- the property ----------------------------------------------------------------------------

describe("the plan's predicted result equals the platform after apply (property, real sandbox process)", () => {
  let sandbox: SandboxHandle;
  let provider: Core.Provider;
  let infos: Map<string, Core.ResourceTypeInfo>;
  const env = { QUICKSTART_ADMIN_PASSWORD: 'predict-property-secret' };
  const tally = { runs: 0, resources: 0, compared: 0, unknown: 0 };

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    provider = await providers.loadOpenApiProvider({
      name: 'sb',
      spec: `${sandbox.url}/openapi.json`,
      endpoint: sandbox.url,
      workspace: 'predict-property',
    });
    infos = new Map(provider.describe().types.map((t) => [`sb.${t.name}`, t]));
  });
  afterAll(async () => {
    await provider?.close?.();
    await sandbox?.stop();
  });

  /** The objects on the sandbox by the address in their ownership marker. */
  async function observedByAddress(): Promise<Map<string, Record<string, unknown>>> {
    const out = new Map<string, Record<string, unknown>>();
    for (const type of ['networks', 'services', 'buckets']) {
      for (const o of await provider.list(type)) {
        if (o.marker) out.set(o.marker.address, { ...o.fields });
      }
    }
    return out;
  }

  /** The user's part of a field: Tend's ownership marker left out, as every comparison of Tend does. */
  function userPart(info: Core.ResourceTypeInfo, field: string, value: unknown): unknown {
    return field === info.markerField ? core.withoutMarkerIn(info.markerKind, value) : value;
  }

  /** Where the predicted result and the platform differ (empty: they agree). */
  function mismatches(
    address: string,
    predicted: Core.PredictedState,
    after: Record<string, unknown> | undefined,
    info: Core.ResourceTypeInfo,
  ): string[] {
    if (after === undefined) return [`${address}: predicted an object, none after apply`];
    const out: string[] = [];
    const fields = new Set([...Object.keys(predicted.object), ...Object.keys(after)]);
    for (const f of fields) {
      if (predicted.unknown.has(f)) {
        tally.unknown++;
        continue;
      }
      const known = Object.hasOwn(predicted.object, f);
      if (!known && predicted.onlyKnown) {
        tally.unknown++; // a field the platform sets on create
        continue;
      }
      tally.compared++;
      const want = known ? userPart(info, f, predicted.object[f]) : undefined;
      const got = Object.hasOwn(after, f) ? userPart(info, f, after[f]) : undefined;
      if (!isDeepStrictEqual(want, got)) {
        out.push(
          `${address}.${f}: predicted ${JSON.stringify(want)}, after apply ${JSON.stringify(got)}`,
        );
      }
    }
    return out;
  }

  it('on every field it knows, for random intents (creates, updates, replaces, deletes)', async () => {
    await fc.assert(
      fc.asyncProperty(intent, intent, async (first, second) => {
        // Left out: the network removed while the service that was on it stays, without declaring
        // `network_id`. Tend leaves an undeclared field alone, so the service keeps pointing at the
        // network and the sandbox refuses the delete (409 has_dependents): an apply that fails, not a
        // prediction to check (the plan's "nothing declared depends on it" is true of the intent only).
        fc.pre(!(first.service?.onNetwork === true && second.service !== null && !second.network));
        tally.runs++;
        await sandbox.reset();
        const ex = copyExample('quickstart', sandbox.url);
        try {
          ex.write('arbitration.yaml', '');
          ex.write('app.yaml', toYaml(first));
          const before = await runCli(['apply', ex.dir, '--yes'], { env });
          expect(before.code, `first apply:\n${before.stdout}${before.stderr}`).toBe(0);

          ex.write('app.yaml', toYaml(second));
          const planned = await runCli(['plan', ex.dir, '--json'], { env });
          expect([0, 2], `plan:\n${planned.stdout}${planned.stderr}`).toContain(planned.code);
          const plan = JSON.parse(planned.stdout) as { steps: Core.PlanStep[] };
          const observed = await observedByAddress();
          const declared = declaredOf(second);
          const predicted = plan.steps.flatMap((step) => {
            const info = infos.get(step.type)!;
            const p = core.predictedState(
              step,
              observed.get(step.address),
              declared.get(step.address) ?? {},
              info,
            );
            return p ? [{ address: step.address, p, info }] : [];
          });

          const applied = await runCli(['apply', ex.dir, '--yes'], { env });
          expect(applied.code, `second apply:\n${applied.stdout}${applied.stderr}`).toBe(0);
          const after = await observedByAddress();
          const wrong = predicted.flatMap(({ address, p, info }) => {
            tally.resources++;
            return mismatches(address, p, after.get(address), info);
          });
          expect(
            wrong,
            `first intent:\n${toYaml(first)}\nsecond intent:\n${toYaml(second)}`,
          ).toEqual([]);
        } finally {
          ex.cleanup();
        }
      }),
      {
        numRuns: 15,
        // Each run is three `tend` processes: shrinking a counterexample is bounded in time.
        interruptAfterTimeLimit: 120_000,
        markInterruptAsFailure: false,
      },
    );
    // Not vacuous: fields were compared, and some were unknown before apply.
    console.log(`predict-property: ${JSON.stringify(tally)}`);
    expect(tally.compared).toBeGreaterThan(0);
    expect(tally.unknown).toBeGreaterThan(0);
  }, 180_000);

  // Found by the property above (with `k.x` among the tag keys): a change to a tag whose key holds a
  // dot is planned as `tags.k.x` and refused at apply ("tags.k.x would be sent as undefined, but the
  // plan showed "a""): `diffDeclared` joins the path with unescaped dots, and the executor's
  // `assertAsPlanned` reads it back with `getPath` (split on every dot). Not fixed here (the
  // FieldChange path format is read in many places); marked as failing until it is, when this test
  // fails and `.fails` must go.
  it.fails(
    'a tag whose key holds a dot is added by an update (known bug: path not escaped)',
    async () => {
      await sandbox.reset();
      const ex = copyExample('quickstart', sandbox.url);
      try {
        ex.write('arbitration.yaml', '');
        ex.write(
          'app.yaml',
          toYaml({ network: null, service: null, bucket: { name: 'prop-bucket-a' } }),
        );
        expect((await runCli(['apply', ex.dir, '--yes'], { env })).code).toBe(0);
        const withDot = {
          network: null,
          service: null,
          bucket: { name: 'prop-bucket-a', tags: { 'k.x': 'a' } },
        };
        ex.write('app.yaml', toYaml(withDot));
        const applied = await runCli(['apply', ex.dir, '--yes'], { env });
        expect(applied.stdout + applied.stderr).not.toContain('plan.changed');
        expect(applied.code).toBe(0);
      } finally {
        ex.cleanup();
      }
    },
    60_000,
  );
});
