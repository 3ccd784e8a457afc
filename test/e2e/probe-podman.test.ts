import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ROOT, runCli, startCli } from '../support/cli.js';
import { overlayUpdates, probeArgs } from '../support/probe.js';
import { PODMAN, startPodman, type PodmanHandle } from '../support/podman.js';

// `tend providers probe` against Podman 4.3's Docker-compatible service, managed through Docker
// Engine's own document (examples/podman/specs/docker-engine-1.41.yaml, unmodified): a platform
// implementing someone else's document. The probe is given only the structure in
// test/e2e/probe/podman.structure.overlay.yaml (where ids and envelopes are, and create examples
// Podman accepts), never the identity or marker facts; what it learns is compared with the overlay
// written by hand (examples/podman/specs/podman.overlay.yaml). Every difference is listed below with
// its reason (and in examples/podman/README.md).

const EXAMPLE = join(ROOT, 'examples', 'podman');
const SPEC = join(EXAMPLE, 'specs', 'docker-engine-1.41.yaml');
const HAND = join(EXAMPLE, 'specs', 'podman.overlay.yaml');
const STRUCTURE = join(ROOT, 'test/e2e/probe/podman.structure.overlay.yaml');
const TYPES = ['networks', 'volumes', 'secrets'];

/**
 * What the probe writes that the hand-written overlay does not say, and why. Key: the fact as
 * `providers inspect` shows it (`type field: value`).
 */
const LEARNED_ONLY: Record<string, string> = {
  'networks writeOnly: CheckDuplicate':
    'a flag of the create request, never part of a network: true, and harmless (examples/podman never sends it)',
  'secrets writeOnly: Data':
    'the structure overlay leaves `x-tend-sensitive` out (the probe never sends a sensitive field, and Podman refuses a secret without data), so the probe sees a field never read back; the hand overlay says more: sensitive, which is write-only too',
};

/** What the hand-written overlay says that the probe does not learn here, and why. */
const NOT_LEARNED: Record<string, string> = {
  'secrets sensitive: Data':
    'whether a value is a secret is a person’s statement, not something an answer shows (above)',
};

/**
 * Every annotation the probe writes here, with what it is in the hand-written overlay. The probe
 * targets the create body's schema (written inline in this document); the hand-written overlay
 * mostly the read schemas (`Network`, `Volume`) or the operation: inference reads all three, so
 * `providers inspect` is what the comparison below uses.
 */
const LEARNED: Record<string, string> = {
  "$.paths['/networks/create'].post.parameters[0].schema x-tend-identity":
    'as the hand-written `Network` (natural key), from the 500',
  "$.paths['/networks/create'].post.parameters[0].schema x-tend-natural-key": 'Name, as by hand',
  "$.paths['/networks/create'].post.parameters[0].schema.properties.CheckDuplicate writeOnly":
    'not by hand (LEARNED_ONLY)',
  '$.definitions.IPAM x-tend-normalize':
    "not by hand: Podman writes an IPv6 gateway in its canonical form (the document's IPAM example is IPv6); examples/podman declares IPv4 only, where nothing changes",
  "$.paths['/volumes/create'].post.parameters[0].schema x-tend-identity":
    'as the hand-written `Volume` (natural key), from the volume answered again',
  "$.paths['/volumes/create'].post.parameters[0].schema x-tend-natural-key": 'Name, as by hand',
  "$.paths['/volumes/create'].post.parameters[0].schema.properties.DriverOpts writeOnly":
    'as the hand-written x-tend-write-only; its x-tend-immutable is not learned and changes nothing: volumes have no update, every field is create-only either way',
  "$.paths['/secrets/create'].post.parameters[0].schema x-tend-identity":
    'natural key, as inferred from the document with the hand-written overlay (its 409)',
  "$.paths['/secrets/create'].post.parameters[0].schema x-tend-natural-key": 'Name, as inferred',
  "$.paths['/secrets/create'].post.parameters[0].schema x-tend-marker":
    'false, as the hand-written one on POST /secrets/create',
  '$.definitions.SecretSpec.properties.Data writeOnly': 'not by hand (LEARNED_ONLY)',
  '$ x-tend-consistent-reads': 'true, as by hand',
};

interface InspectedType {
  readonly name: string;
  readonly identity?: string;
  readonly naturalKey?: readonly string[];
  readonly markerField?: string;
  readonly writeOnly?: readonly string[];
  readonly sensitive?: readonly string[];
  readonly createOnly?: readonly string[];
}

/** The identity facts `providers inspect` derives with an overlay, per probed type. */
async function inspected(overlay: string): Promise<Map<string, string[]>> {
  const r = await runCli(['providers', 'inspect', SPEC, '--overlay', overlay, '--json']);
  expect(r.code, r.stderr).toBe(0);
  const report = JSON.parse(r.stdout) as { types: InspectedType[] };
  const out = new Map<string, string[]>();
  for (const t of report.types.filter((x) => TYPES.includes(x.name))) {
    out.set(t.name, [
      `${t.name} identity: ${t.identity ?? '-'}`,
      `${t.name} naturalKey: ${(t.naturalKey ?? []).join(', ')}`,
      `${t.name} markerField: ${t.markerField ?? 'none'}`,
      ...(t.writeOnly ?? []).map((f) => `${t.name} writeOnly: ${f}`),
      ...(t.sensitive ?? []).map((f) => `${t.name} sensitive: ${f}`),
      ...(t.createOnly ?? []).map((f) => `${t.name} createOnly: ${f}`),
    ]);
  }
  return out;
}

describe.skipIf(PODMAN.skip)(
  `tend providers probe against Podman through Docker Engine's document${PODMAN.note}`,
  () => {
    let podman: PodmanHandle;
    let dir: string;

    const args = (...more: string[]) =>
      probeArgs(SPEC, STRUCTURE, podman.apiUrl, ...TYPES.flatMap((t) => ['--type', t]), ...more);

    /** What the platform holds: the names of its networks, volumes and secrets. */
    async function platform(): Promise<{
      networks: string[];
      volumes: string[];
      secrets: string[];
    }> {
      const get = async (path: string): Promise<unknown> => {
        const r = await podman.api('GET', path);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return r.body;
      };
      const networks = (await get('/networks')) as { Name: string }[];
      const volumes = (await get('/volumes')) as { Volumes: { Name: string }[] };
      const secrets = (await get('/secrets')) as { Spec: { Name: string } }[];
      return {
        networks: networks.map((n) => n.Name).sort(),
        volumes: volumes.Volumes.map((v) => v.Name).sort(),
        secrets: secrets.map((s) => s.Spec.Name).sort(),
      };
    }

    beforeAll(async () => {
      podman = await startPodman();
      dir = mkdtempSync(join(tmpdir(), 'tend-probe-podman-'));
      // A person's objects, which the probe must leave alone.
      for (const [path, body] of [
        ['/networks/create', { Name: 'app-net', Labels: { owner: 'person' } }],
        ['/volumes/create', { Name: 'app-data', Labels: { owner: 'person' } }],
        ['/secrets/create', { Name: 'app-key', Data: Buffer.from('s3cret').toString('base64') }],
      ] as const) {
        const made = await podman.api('POST', path, body);
        expect(made.status, JSON.stringify(made.body)).toBeLessThan(300);
      }
    });
    afterAll(async () => {
      await podman?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('learns what the hand-written overlay states (or the difference is explained), and leaves the platform as it was', async () => {
      const before = await platform();
      expect(before).toEqual({
        networks: ['app-net', 'bridge'],
        volumes: ['app-data'],
        secrets: ['app-key'],
      });
      const out = join(dir, 'learned.yaml');
      const r = await runCli(args('--out', out, '--journal', join(dir, 'j1.sqlite'), '--json'));
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as {
        leftovers: unknown[];
        types: { type: string; status: string }[];
        facts: { kind: string; type: string; unique?: boolean; kept?: boolean; evidence: string }[];
        budget: { used: number; limit: number };
      };
      expect(report.types.map((t) => `${t.type} ${t.status}`)).toEqual(
        TYPES.map((t) => `${t} probed`),
      );
      expect(report.leftovers).toEqual([]);
      expect(report.budget.used).toBeLessThanOrEqual(report.budget.limit);
      expect(await platform()).toEqual(before);
      // Each probe object deleted once (progress lines on stderr, as JSON with --json): the volume a
      // second create answered again is the first one, not a copy to delete.
      for (const t of TYPES) {
        expect(r.stderr.match(new RegExp(`"${t}: removed tend-probe-`, 'g')), t).toHaveLength(1);
      }

      const fact = (type: string, kind: string) => {
        const f = report.facts.find((x) => x.type === type && x.kind === kind);
        expect(f, `${type} ${kind}`).toBeDefined();
        return f!;
      };
      // Networks: unique by name, learned from a 500 whose words say so, quoted.
      expect(fact('networks', 'identity')).toMatchObject({ unique: true });
      expect(fact('networks', 'identity').evidence).toMatch(
        /^second POST \/networks\/create with the same Name → 500 "network name \S+ already used: network already exists"$/,
      );
      expect(fact('networks', 'marker')).toMatchObject({ kept: true });
      // Volumes: a second create answers the same volume: the name is the identity, not "not unique".
      expect(fact('volumes', 'identity')).toMatchObject({ unique: true });
      expect(fact('volumes', 'identity').evidence).toBe(
        'second POST /volumes/create with the same Name → 201 with the object that exists, and the list still shows one: Name is the identity, the create idempotent (no second object was made)',
      );
      expect(fact('volumes', 'marker')).toMatchObject({ kept: true });
      // Secrets: labels kept by the read, listed as null: no marker place; the name is unique (409).
      expect(fact('secrets', 'identity')).toMatchObject({ unique: true });
      expect(fact('secrets', 'identity').evidence).toMatch(
        /^second POST \/secrets\/create with the same Name → 409 "\S+: secret name in use"$/,
      );
      expect(fact('secrets', 'marker')).toMatchObject({ kept: false });
      expect(fact('secrets', 'marker').evidence).toMatch(
        /read back unchanged by GET \/secrets\/\{id\}, but GET \/secrets listed null: not where Tend finds its objects$/,
      );

      // The overlay says so, with its evidence.
      const text = readFileSync(out, 'utf8');
      expect(text).toMatch(
        /# probed \d{4}-\d\d-\d\d against http:\/\/127\.0\.0\.1:\d+\/v1\.41: second POST \/networks\/create with the same Name → 500 "network name \S+ already used: network already exists"/,
      );
      const learned = overlayUpdates(out);
      expect(learned.get("$.paths['/secrets/create'].post.parameters[0].schema")).toEqual({
        'x-tend-identity': 'natural-key',
        'x-tend-natural-key': 'Name',
        'x-tend-marker': false,
      });
      expect(learned.get('$')).toEqual(overlayUpdates(HAND).get('$'));
      // Every annotation learned is one listed (and explained) above, and every one listed was learned.
      const written = [...learned].flatMap(([target, keys]) =>
        Object.keys(keys).map((k) => `${target} ${k}`),
      );
      expect(written.sort()).toEqual(Object.keys(LEARNED).sort());

      // What the hand-written overlay and the learned one (with the structure it was given) make of
      // the document: the same identity and marker place per type; other differences explained.
      const combined = join(dir, 'combined.yaml');
      const actionsOf = (file: string) =>
        (parse(readFileSync(file, 'utf8')) as { actions: unknown[] }).actions;
      writeFileSync(
        combined,
        stringify({
          overlay: '1.0.0',
          info: { title: 'structure + learned', version: '1' },
          actions: [...actionsOf(STRUCTURE), ...actionsOf(out)],
        }),
      );
      const fromProbe = await inspected(combined);
      const fromHand = await inspected(HAND);
      for (const type of TYPES) {
        const got = fromProbe.get(type) ?? [];
        const want = fromHand.get(type) ?? [];
        for (const f of got.filter((x) => !want.includes(x))) {
          expect(LEARNED_ONLY[f], `learned, not in the hand-written overlay: ${f}`).toBeDefined();
        }
        for (const f of want.filter((x) => !got.includes(x))) {
          expect(NOT_LEARNED[f], `in the hand-written overlay, not learned: ${f}`).toBeDefined();
        }
        // Identity and marker place are never a difference.
        expect(got.slice(0, 3), type).toEqual(want.slice(0, 3));
      }
      expect(fromProbe.get('secrets')!.slice(0, 3)).toEqual([
        'secrets identity: natural-key',
        'secrets naturalKey: Name',
        'secrets markerField: none',
      ]);
    });

    it('a SIGKILL after its first objects are journaled leaves nothing behind once the probe runs again', async () => {
      const before = await platform();
      const journal = join(dir, 'killed.sqlite');
      const first = startCli(args('--out', join(dir, 'k1.yaml'), '--journal', journal));
      await first.waitFor(/volumes: created tend-probe-/);
      first.child.kill('SIGKILL');
      await first.stop();
      const left = await platform();
      expect(left.networks.some((n) => /^tend-probe-/i.test(n))).toBe(true);
      expect(left.volumes.some((v) => /^tend-probe-/i.test(v))).toBe(true);

      const again = await runCli(args('--out', join(dir, 'k2.yaml'), '--journal', journal));
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(again.stderr).toMatch(
        /networks: removed tend-probe-\S+ left by probe run [0-9a-f]{8}/,
      );
      expect(again.stderr).toMatch(/volumes: removed tend-probe-\S+ left by probe run [0-9a-f]{8}/);
      expect(await platform()).toEqual(before);
    });
  },
);
