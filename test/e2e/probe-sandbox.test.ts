import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../support/cli.js';
import { startSandboxProcess, type SandboxHandle } from '../support/sandbox-process.js';

// `tend providers probe` against the sandbox (`tend sandbox`), whose own document states its
// create-only fields (`x-tend-immutable`) and whose bucket names are their identity: what the probe
// learns must agree with the document. Plus every usage error, each with its message and exit 2,
// and a budget too small to finish: probing stops and cleans up.

const SPEC = join(ROOT, 'src/sandbox/openapi.json');
const EXAMPLES = join(ROOT, 'test/e2e/probe/sandbox.examples.overlay.yaml');
const PDNS_SPEC = join(ROOT, 'examples/powerdns/specs/powerdns-auth-4.7.3.swagger.yaml');
const PDNS_STRUCTURE = join(ROOT, 'test/e2e/probe/pdns.structure.overlay.yaml');

interface Report {
  ok: boolean;
  types: { type: string; status: string; reason?: string }[];
  facts: {
    kind: string;
    type: string;
    field?: string;
    outcome?: string;
    unique?: boolean;
    kept?: boolean;
  }[];
  leftovers: unknown[];
  stopped?: string;
  budget: { used: number; limit: number };
}

describe('tend providers probe against the sandbox', () => {
  let sandbox: SandboxHandle;
  let dir: string;
  let network: string;

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    dir = mkdtempSync(join(tmpdir(), 'tend-probe-sb-'));
    // The scratch network instances are probed on (a reference the probe must not invent).
    const r = await fetch(`${sandbox.url}/networks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'scratch', cidr: '10.9.0.0/16' }),
    });
    expect(r.status).toBe(201);
    network = ((await r.json()) as { id: string }).id;
  });
  afterAll(async () => {
    await sandbox?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const probe = (...more: string[]) =>
    runCli(['providers', 'probe', SPEC, '--overlay', EXAMPLES, '--endpoint', sandbox.url, ...more]);
  const objects = async () =>
    (await sandbox.objects()).map((o) => `${o.type}/${o.id} ${JSON.stringify(o.fields)}`).sort();

  it("learns the document's create-only fields and identities, and leaves the platform as it was", async () => {
    const before = await objects();
    const r = await probe(
      '--yes',
      '--json',
      '--scope',
      `network_id=${network}`,
      '--type',
      'networks',
      '--type',
      'instances',
      '--type',
      'services',
      '--type',
      'buckets',
      '--out',
      join(dir, 'sb.yaml'),
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.types.map((t) => `${t.type} ${t.status}`)).toEqual([
      'networks probed',
      'instances probed',
      'services probed',
      'buckets probed',
    ]);
    expect(await objects()).toEqual(before);

    // Create-only per the document = refused or ignored in place per the probe, for the fields it changed.
    const doc = JSON.parse(readFileSync(SPEC, 'utf8')) as {
      components: {
        schemas: Record<string, { properties: Record<string, Record<string, unknown>> }>;
      };
    };
    const schemaOf: Record<string, string> = {
      networks: 'Network',
      instances: 'Instance',
      services: 'Service',
      buckets: 'Bucket',
    };
    const changed = report.facts.filter((f) => f.kind === 'field' && f.outcome !== 'invalid');
    expect(changed.length).toBeGreaterThanOrEqual(6);
    for (const f of changed) {
      const stated =
        doc.components.schemas[schemaOf[f.type]!]!.properties[f.field!]!['x-tend-immutable'] ===
        true;
      expect(`${f.type}.${f.field} ${f.outcome}`).toBe(
        `${f.type}.${f.field} ${stated ? 'refused' : 'updatable'}`,
      );
    }
    expect(changed.map((f) => `${f.type}.${f.field}`)).toEqual(
      expect.arrayContaining(['networks.cidr', 'instances.image', 'buckets.name']),
    );
    // Bucket names are their identity; names of the others repeat, and their tags keep a marker.
    const identity = report.facts
      .filter((f) => f.kind === 'identity')
      .map((f) => `${f.type} ${String(f.unique)}`);
    expect(identity).toEqual([
      'networks false',
      'instances false',
      'services false',
      'buckets true',
    ]);
    expect(report.facts.filter((f) => f.kind === 'marker').every((f) => f.kept)).toBe(true);
    // The sandbox serves its document with x-tend-consistent-reads when its reads never lag.
    const served = (await (await fetch(`${sandbox.url}/openapi.json`)).json()) as Record<
      string,
      unknown
    >;
    expect(served['x-tend-consistent-reads']).toBe(true);
    const text = readFileSync(join(dir, 'sb.yaml'), 'utf8');
    expect(text).toContain('x-tend-consistent-reads: true');
    expect(text).toContain('target: "$.components.schemas.Bucket"');
    expect(text).toContain('x-tend-natural-key: name');
  });

  it('reads that lag writes: no x-tend-consistent-reads, and the human output says so', async () => {
    // A sandbox of its own, started so that its reads may lag (its document then promises nothing).
    const lagging = await startSandboxProcess(['--eventual-consistency', '0']);
    await lagging.setFaults({ eventualConsistencyMs: 2000 });
    try {
      const out = join(dir, 'lag.yaml');
      const r = await runCli([
        'providers',
        'probe',
        SPEC,
        '--overlay',
        EXAMPLES,
        '--endpoint',
        lagging.url,
        '--yes',
        '--type',
        'buckets',
        '--out',
        out,
      ]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^buckets {2}probed$/m);
      expect(r.stdout).toMatch(
        /^ {2}reads {8}not listed at once — GET \/buckets right after the create did not list the new object$/m,
      );
      expect(r.stdout).toMatch(/^ {2}identity {5}name is a natural key — second POST \/buckets/m);
      expect(r.stdout).toMatch(/^Overlay written to .*lag\.yaml$/m);
      expect(readFileSync(out, 'utf8')).not.toContain('x-tend-consistent-reads');
    } finally {
      await lagging.stop();
    }
  });

  it('says what it could not remove, with ids (exit 1), and the next run removes it', async () => {
    const before = await objects();
    await sandbox.setFaults({ errorRate: 1, methods: ['DELETE'] });
    let failed;
    try {
      failed = await probe(
        '--yes',
        '--type',
        'buckets',
        '--out',
        join(dir, 'f1.yaml'),
        '--journal',
        join(dir, 'f.sqlite'),
      );
    } finally {
      await sandbox.setFaults({ errorRate: 0, methods: null });
    }
    expect(failed.code, failed.stdout + failed.stderr).toBe(1);
    expect(failed.stdout).toMatch(
      /Left on the platform \(remove them by hand, or run the probe again\):\n {2}buckets tend-probe-[0-9a-f]{8} \(tend-probe-[0-9a-f]{8}\)/,
    );
    expect(await objects()).not.toEqual(before);
    const again = await probe(
      '--yes',
      '--type',
      'buckets',
      '--out',
      join(dir, 'f2.yaml'),
      '--journal',
      join(dir, 'f.sqlite'),
    );
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stderr).toMatch(/buckets: removed tend-probe-[0-9a-f]{8} left by probe run/);
    expect(await objects()).toEqual(before);
  });

  it('a create that failed with a 5xx may have acted: reported as possibly left, until a later run cannot find it either', async () => {
    const before = await objects();
    await sandbox.setFaults({ errorRate: 1, methods: ['POST'] });
    let failed;
    try {
      failed = await probe(
        '--yes',
        '--json',
        '--type',
        'buckets',
        '--out',
        join(dir, 'u1.yaml'),
        '--journal',
        join(dir, 'u.sqlite'),
      );
    } finally {
      await sandbox.setFaults({ errorRate: 0, methods: null });
    }
    expect(failed.code, failed.stdout + failed.stderr).toBe(1);
    const report = JSON.parse(failed.stdout) as Report;
    expect(report.leftovers).toEqual([
      { type: 'buckets', name: expect.stringMatching(/^tend-probe-[0-9a-f]{8}$/) as string },
    ]);
    expect(failed.stderr).toMatch(
      /was not found in the list after a create whose outcome is unknown; it may exist/,
    );
    const again = await probe(
      '--yes',
      '--type',
      'buckets',
      '--out',
      join(dir, 'u2.yaml'),
      '--journal',
      join(dir, 'u.sqlite'),
    );
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stderr).toMatch(/was not found again; taken as never created/);
    expect(await objects()).toEqual(before);
  });

  it('stops cleanly, and cleans up, when the budget would be exceeded', async () => {
    const before = await objects();
    const r = await probe(
      '--yes',
      '--json',
      '--type',
      'services',
      '--budget',
      '8',
      '--out',
      join(dir, 'b.yaml'),
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.stopped).toMatch(
      /budget of 8 requests would have been exceeded; probing stopped and cleaned up/,
    );
    expect(report.types).toEqual([
      expect.objectContaining({ type: 'services', status: 'stopped' }),
    ]);
    expect(report.budget.used).toBeLessThanOrEqual(8);
    expect(report.leftovers).toEqual([]);
    expect(await objects()).toEqual(before);
  });

  describe('usage errors: exit 2, nothing sent, a message saying what to pass', () => {
    const dead = 'http://127.0.0.1:9';
    const cases: { reason: string; args: string[]; message: RegExp }[] = [
      {
        reason: 'without --yes',
        args: [SPEC, '--endpoint', dead],
        message:
          /creates and deletes objects on the platform; nothing was sent\n\s+hint: .*pass --yes/,
      },
      {
        reason: 'a type under a parent without --scope',
        args: [
          PDNS_SPEC,
          '--overlay',
          PDNS_STRUCTURE,
          '--endpoint',
          dead,
          '--type',
          'rrsets',
          '--yes',
        ],
        message:
          /these types live under a parent the probe must not choose: rrsets \(--scope zone_id=<value>\); nothing was sent/,
      },
      {
        reason: 'an unknown type',
        args: [SPEC, '--endpoint', dead, '--type', 'nope', '--yes'],
        message:
          /no resource type nope in this document; its types: networks, instances, volumes, buckets, services/,
      },
      {
        reason: 'a budget too small for the types',
        args: [
          SPEC,
          '--overlay',
          EXAMPLES,
          '--endpoint',
          dead,
          '--type',
          'buckets',
          '--type',
          'networks',
          '--budget',
          '10',
          '--yes',
        ],
        message:
          /a budget of 10 requests is too small to probe 2 types: at least 16 are needed \(8 per type\); nothing was sent/,
      },
      {
        reason: 'a budget that is not a number',
        args: [SPEC, '--endpoint', dead, '--budget', 'lots', '--yes'],
        message: /--budget lots: expected a whole number of requests, at least 1/,
      },
      {
        reason: 'a scope without a value',
        args: [SPEC, '--endpoint', dead, '--scope', 'zone_id', '--yes'],
        message: /--scope zone_id: expected <param>=<value>/,
      },
      {
        reason: 'an auth header without the variable holding the credential',
        args: [SPEC, '--endpoint', dead, '--auth-header', 'X-API-Key', '--yes'],
        message: /--auth-header and --auth-env go together/,
      },
      {
        reason: 'an auth variable that is not set',
        args: [
          SPEC,
          '--endpoint',
          dead,
          '--auth-header',
          'X-API-Key',
          '--auth-env',
          'TEND_PROBE_NO_SUCH_VAR',
          '--yes',
        ],
        message: /--auth-env TEND_PROBE_NO_SUCH_VAR: the variable is not set/,
      },
    ];
    for (const c of cases) {
      it(c.reason, async () => {
        const r = await runCli([
          'providers',
          'probe',
          ...c.args,
          '--out',
          join(dir, `u-${Date.now()}.yaml`),
        ]);
        expect(r.stderr).toMatch(c.message);
        expect(r.code).toBe(2);
      });
    }
    it('an --out file that exists is never overwritten', async () => {
      const file = join(dir, 'mine.yaml');
      writeFileSync(file, 'my overlay');
      const r = await runCli([
        'providers',
        'probe',
        SPEC,
        '--endpoint',
        dead,
        '--yes',
        '--out',
        file,
      ]);
      expect(r.stderr).toMatch(/mine\.yaml already exists; the probe does not overwrite it/);
      expect(r.code).toBe(2);
      expect(readFileSync(file, 'utf8')).toBe('my overlay');
    });
    it('--json gives the error as data', async () => {
      const r = await runCli([
        'providers',
        'probe',
        SPEC,
        '--endpoint',
        dead,
        '--json',
        '--out',
        join(dir, 'j.yaml'),
      ]);
      expect(r.code).toBe(2);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: 'probe.needs_yes' } });
    });
  });
});
