import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli, startCli } from '../support/cli.js';
import { ProbeJournal } from '../../src/app/probe-journal.js';
import { displayUrl } from '../../src/core/index.js';
import { overlayUpdates, probeArgs } from '../support/probe.js';
import { PDNS, startPdns, type PdnsHandle } from '../support/pdns.js';

// `tend providers probe` against a real pdns_server, given only the structure the Swagger document
// cannot say (test/e2e/probe/pdns.structure.overlay.yaml). What it learns is compared with the
// overlay a person wrote by hand after manual rounds (examples/powerdns/specs/pdns.overlay.yaml):
// each fact it writes must be in the hand-written overlay, and each fact of the hand-written
// overlay within what the probe looks at must be learned, or the difference is listed below with
// its reason (docs/onboard-rest-api.md, "Learning from the platform").

const SPEC = join(ROOT, 'examples/powerdns/specs/powerdns-auth-4.7.3.swagger.yaml');
const STRUCTURE = join(ROOT, 'test/e2e/probe/pdns.structure.overlay.yaml');
const HAND = join(ROOT, 'examples/powerdns/specs/pdns.overlay.yaml');
const SCRATCH = 'scratch.example.';

/**
 * The hand-written facts the probe does not learn here, and why (docs/onboard-rest-api.md lists
 * them too). Key: `target key`.
 */
const NOT_LEARNED: Record<string, string> = {
  '$.definitions.TSIGKey.properties.algorithm x-tend-immutable':
    'the probe has no second valid algorithm to change to: its "-b" value is refused as invalid, which decides nothing',
  '$.definitions.RRSet.properties.records x-tend-normalize':
    'the probe learns the AAAA canonicalisation (ip); the hand rule (sort, dns-rdata keyed by type) covers the data of every record type and the order of records, which one AAAA record cannot show',
};

/** The facts the probe writes where the hand-written overlay says more (subset, not equal). */
const SUBSET: Record<string, string> = {
  '$.definitions.TSIGKey.properties.name x-tend-normalize':
    'no-trailing-dot: the example key name has no dot, so the probe never sends one',
  '$.definitions.RRSet.properties.records x-tend-normalize':
    'ip is what the AAAA record showed; the hand rule is broader (above)',
};

/** The hand-written facts within what the probe looks at: each must be learned or explained. */
const PROBED: [string, string][] = [
  ['$', 'x-tend-consistent-reads'],
  ['$.definitions.Zone', 'x-tend-identity'],
  ['$.definitions.Zone', 'x-tend-natural-key'],
  ['$.definitions.Zone.properties.name', 'x-tend-immutable'],
  ['$.definitions.Zone.properties.name', 'x-tend-normalize'],
  ['$.definitions.Zone.properties.nameservers', 'writeOnly'],
  ['$.definitions.RRSet.properties.name', 'x-tend-normalize'],
  ['$.definitions.RRSet.properties.type', 'x-tend-normalize'],
  ['$.definitions.RRSet.properties.records', 'x-tend-normalize'],
  ['$.definitions.Record.properties.disabled', 'default'],
  ['$.definitions.TSIGKey', 'x-tend-identity'],
  ['$.definitions.TSIGKey', 'x-tend-natural-key'],
  ['$.definitions.TSIGKey.properties.name', 'x-tend-normalize'],
  ['$.definitions.TSIGKey.properties.algorithm', 'x-tend-immutable'],
];

describe.skipIf(PDNS.skip)(`tend providers probe against a real pdns_server${PDNS.note}`, () => {
  let pdns: PdnsHandle;
  let dir: string;

  const args = (...more: string[]) =>
    probeArgs(
      SPEC,
      STRUCTURE,
      pdns.apiUrl,
      '--auth-header',
      'X-API-Key',
      '--auth-env',
      'PDNS_API_KEY',
      ...more,
    );
  const env = () => ({ PDNS_API_KEY: pdns.apiKey });

  /** What the platform holds: zones, the scratch zone's record sets (serials aside), TSIG keys. */
  async function platform(): Promise<unknown> {
    const zones = (await pdns.api('GET', '/servers/localhost/zones')).body as { name: string }[];
    const scratch = (await pdns.api('GET', `/servers/localhost/zones/${SCRATCH}`)).body as {
      rrsets: { name: string; type: string; records: unknown }[];
    };
    const keys = (await pdns.api('GET', '/servers/localhost/tsigkeys')).body as { name: string }[];
    return {
      zones: zones.map((z) => z.name).sort(),
      rrsets: scratch.rrsets
        .filter((r) => r.type !== 'SOA')
        .map((r) => `${r.name} ${r.type} ${JSON.stringify(r.records)}`)
        .sort(),
      keys: keys.map((k) => k.name).sort(),
    };
  }

  beforeAll(async () => {
    pdns = await startPdns();
    dir = mkdtempSync(join(tmpdir(), 'tend-probe-pdns-'));
    const made = await pdns.api('POST', '/servers/localhost/zones', {
      name: SCRATCH,
      kind: 'Native',
      nameservers: ['ns1.scratch.example.'],
    });
    expect(made.status).toBe(201);
  });
  afterAll(async () => {
    await pdns?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('learns what the hand-written overlay states (or the difference is explained), and leaves the platform as it was', async () => {
    const before = await platform();
    const out = join(dir, 'learned.yaml');
    const r = await runCli(
      args(
        '--scope',
        `zone_id=${SCRATCH}`,
        '--type',
        'zones',
        '--type',
        'rrsets',
        '--type',
        'tsigkeys',
        '--out',
        out,
        '--journal',
        join(dir, 'j1.sqlite'),
        '--json',
      ),
      { env: env() },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as {
      ok: boolean;
      leftovers: unknown[];
      types: { type: string; status: string }[];
      facts: { kind: string; type: string; path?: string; ops?: string[]; evidence: string }[];
      budget: { used: number; limit: number };
    };
    expect(report.types.map((t) => `${t.type} ${t.status}`)).toEqual([
      'zones probed',
      'rrsets probed',
      'tsigkeys probed',
    ]);
    expect(report.leftovers).toEqual([]);
    expect(report.budget.used).toBeLessThanOrEqual(report.budget.limit);
    expect(await platform()).toEqual(before);

    // The AAAA canonicalisation established by hand, with its evidence.
    const aaaa = report.facts.find((f) => f.kind === 'normalize' && f.path === 'records[].content');
    expect(aaaa?.ops).toEqual(['ip']);
    expect(aaaa?.evidence).toContain('"2001:DB8:0:0:0:0:0:1"');
    expect(aaaa?.evidence).toContain('"2001:db8::1"');

    const learned = overlayUpdates(out);
    const hand = overlayUpdates(HAND);
    expect([...learned.keys()].length, 'targets learned').toBeGreaterThanOrEqual(9);
    // Every fact the probe wrote is one the hand-written overlay states.
    for (const [target, keys] of learned) {
      for (const [key, value] of Object.entries(keys)) {
        const id = `${target} ${key}`;
        const stated = hand.get(target)?.[key];
        if (key === 'x-tend-normalize' && Array.isArray(value)) {
          if (SUBSET[id] !== undefined && id in NOT_LEARNED) continue;
          const want = new Set(stated as unknown[]);
          if (SUBSET[id] !== undefined) {
            for (const op of value) expect(want.has(op), `${id}: ${String(op)}`).toBe(true);
          } else {
            expect(new Set(value), id).toEqual(want);
          }
        } else {
          expect(stated, id).toEqual(value);
        }
      }
    }
    // Every hand-written fact within what the probe looks at was learned, or is explained.
    for (const [target, key] of PROBED) {
      const id = `${target} ${key}`;
      expect(hand.get(target)?.[key], `${id} is in the hand-written overlay`).toBeDefined();
      if (NOT_LEARNED[id] !== undefined && learned.get(target)?.[key] === undefined) continue;
      expect(learned.get(target)?.[key], `${id} was learned`).toBeDefined();
    }
    // Each piece of evidence names the day and the endpoint.
    const text = readFileSync(out, 'utf8');
    expect(text).toMatch(
      /# probed \d{4}-\d\d-\d\d against http:\/\/127\.0\.0\.1:\d+\/api\/v1: second POST \/servers\/\{server_id\}\/zones with the same name → 409 "Conflict"/,
    );
  });

  it('a SIGKILL after its first create is journaled leaves nothing behind once the probe runs again', async () => {
    const before = await platform();
    const journal = join(dir, 'killed.sqlite');
    const first = startCli(
      args('--type', 'zones', '--out', join(dir, 'k1.yaml'), '--journal', journal),
      { env: env() },
    );
    await first.waitFor(/zones: created tend-probe-/);
    first.child.kill('SIGKILL');
    await first.stop();
    const left = (await platform()) as { zones: string[] };
    expect(left.zones.some((z) => z.startsWith('tend-probe-'))).toBe(true);

    const again = await runCli(
      args('--type', 'zones', '--out', join(dir, 'k2.yaml'), '--journal', journal),
      { env: env() },
    );
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stderr).toMatch(/zones: removed tend-probe-\S+ left by probe run [0-9a-f]{8}/);
    expect(await platform()).toEqual(before);
  });

  it('a journaled create whose answer never came (no id) is found by its name and removed', async () => {
    const before = await platform();
    // As a run killed after it journaled a record set and sent its PATCH, before the answer.
    const name = 'tend-probe-0000beef.scratch.example.';
    const made = await pdns.api('PATCH', `/servers/localhost/zones/${SCRATCH}`, {
      rrsets: [
        {
          name,
          type: 'AAAA',
          ttl: 300,
          changetype: 'REPLACE',
          records: [{ content: '2001:db8::2', disabled: false }],
        },
      ],
    });
    expect(made.status).toBe(204);
    const file = join(dir, 'no-id.sqlite');
    const journal = new ProbeJournal(file);
    journal.intend({
      run: '0000beef',
      endpoint: displayUrl(pdns.apiUrl),
      type: 'rrsets',
      name,
      scope: { zone_id: SCRATCH },
    });
    journal.close();
    const r = await runCli(
      args(
        '--scope',
        `zone_id=${SCRATCH}`,
        '--type',
        'tsigkeys',
        '--out',
        join(dir, 'n.yaml'),
        '--journal',
        file,
      ),
      { env: env() },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stderr).toContain(`rrsets: removed ${name} left by probe run 0000beef`);
    expect(await platform()).toEqual(before);
  });

  it('removes probe objects no journal knows of (by their name) before probing', async () => {
    const before = await platform();
    const stray = await pdns.api('POST', '/servers/localhost/zones', {
      name: 'tend-probe-0000dead.example.org.',
      kind: 'Native',
      nameservers: [],
    });
    expect(stray.status).toBe(201);
    const r = await runCli(
      args(
        '--type',
        'zones',
        '--out',
        join(dir, 's.yaml'),
        '--journal',
        join(dir, 'fresh.sqlite'),
        '--json',
      ),
      { env: env() },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { removedBefore: { name: string }[] };
    expect(report.removedBefore.map((o) => o.name)).toEqual(['tend-probe-0000dead.example.org.']);
    expect(await platform()).toEqual(before);
  });
});
