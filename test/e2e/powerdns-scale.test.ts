import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../support/cli.js';
import { startCountingProxy, type CountingProxy } from '../support/counting-proxy.js';
import { PDNS, startPdns, type PdnsHandle } from '../support/pdns.js';
import { killPdns, restartPdns } from '../support/pdns-restart.js';

// Issue 12, item 5: PowerDNS at scale. One zone with 1 000 rrsets applied through the real CLI
// against a real pdns_server, every request counted by a proxy in front of it: the rrsets of one
// zone go in one PATCH per zone per pass (not one per rrset), observation reads the zone once, and
// the whole apply takes seconds (it took ~145 s with one PATCH and two zone reads per rrset).

/** How many rrsets; TEND_SCALE_RRSETS overrides it (to measure smaller or larger zones by hand). */
const RRSETS = Number(process.env['TEND_SCALE_RRSETS'] ?? 1000);
/**
 * The pass (observe, plan, execute, verify) must take under 10 s; the whole CLI run (starting node,
 * loading the document and 1 000 documents of intent) gets a generous 60 s on a loaded machine. One
 * request per rrset took ~145 s; the request counts below catch that regression exactly.
 */
const PASS_BOUND_MS = 10_000;
const RUN_BOUND_MS = 60_000;

const ZONE = 'scale.test.';
const ZONE_PATH = /\/zones\/scale\.test\.$/;

/** How long the CLI said its pass took (`pass 1 done in 1234 ms`). */
function passMs(stdout: string): number {
  const m = /pass \d+ done in (\d+) ms/.exec(stdout);
  if (!m) throw new Error(`no pass duration in:\n${stdout.slice(-2000)}`);
  return Number(m[1]);
}

/** An intent directory: the Provider pointed at `endpoint`, a zone and `n` A rrsets (`ttl` each). */
function scaleIntent(endpoint: string, n: number, ttl = 300, stateful = false): string {
  const dir = mkdtempSync(join(tmpdir(), 'tend-pdns-scale-'));
  cpSync(join(ROOT, 'examples', 'powerdns', 'specs'), join(dir, 'specs'), { recursive: true });
  const docs = [
    [
      'kind: Provider',
      'name: pdns',
      'type: openapi',
      'spec: ./specs/powerdns-auth-4.7.3.swagger.yaml',
      'overlay: ./specs/pdns.overlay.yaml',
      `endpoint: ${endpoint}`,
      'auth: { header: X-API-Key, fromEnv: PDNS_API_KEY }',
      'concurrency: 1',
    ].join('\n'),
    [
      'kind: Resource',
      'type: pdns.zones',
      'name: scale',
      'spec:',
      `  name: ${ZONE}`,
      '  kind: Native',
      `  nameservers: [ns1.${ZONE}]`,
      ...(stateful ? ['lifecycle: { stateful: true }'] : []),
    ].join('\n'),
  ];
  for (let i = 0; i < n; i++) {
    docs.push(
      [
        'kind: Resource',
        'type: pdns.rrsets',
        `name: h${i}`,
        'spec:',
        '  zone_id: ${pdns.zones/scale.id}',
        `  name: h${i}.${ZONE}`,
        '  type: A',
        `  ttl: ${ttl}`,
        '  records:',
        `    - content: 10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      ].join('\n'),
    );
  }
  writeFileSync(join(dir, 'main.yaml'), docs.join('\n---\n') + '\n');
  return dir;
}

describe.skipIf(PDNS.skip)(`PowerDNS at scale (CLI, real pdns_server)${PDNS.note}`, () => {
  let pdns: PdnsHandle;
  let proxy: CountingProxy;
  let dir: string;
  const env = () => ({ PDNS_API_KEY: pdns.apiKey });

  beforeAll(async () => {
    pdns = await startPdns();
    proxy = await startCountingProxy(pdns.webUrl);
    dir = scaleIntent(`${proxy.url}/api/v1`, RRSETS);
  });
  afterAll(async () => {
    await proxy?.stop();
    await pdns?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`applies ${RRSETS} rrsets of one zone with one PATCH and a bounded number of zone reads`, async () => {
    const t0 = performance.now();
    const apply = await runCli(['apply', dir], { env: env(), timeoutMs: 300_000 });
    const ms = performance.now() - t0;
    expect(apply.code, apply.stdout.slice(-2000) + apply.stderr).toBe(0);
    expect(apply.stdout).toContain(`${RRSETS + 1} converged`);
    const patches = proxy.count('PATCH', ZONE_PATH);
    const zoneReads = proxy.count('GET', ZONE_PATH);
    console.log(
      `apply of ${RRSETS} rrsets: pass ${passMs(apply.stdout)} ms, CLI ${Math.round(ms)} ms, ${proxy.requests.length} requests (${patches} PATCH, ${zoneReads} GET of the zone)`,
    );
    // One request per rrset would be RRSETS PATCHes; the batch is one (a second one only when some
    // rrsets became ready while the first was in flight).
    expect(patches).toBeGreaterThanOrEqual(1);
    expect(patches).toBeLessThanOrEqual(3);
    expect(zoneReads).toBeLessThanOrEqual(10);
    expect(passMs(apply.stdout)).toBeLessThan(PASS_BOUND_MS);
    expect(ms).toBeLessThan(RUN_BOUND_MS);

    const zone = await pdns.api('GET', `/servers/localhost/zones/${ZONE}`);
    const rrsets = (zone.body as { rrsets: { type: string }[] }).rrsets;
    expect(rrsets.filter((r) => r.type === 'A')).toHaveLength(RRSETS);
  }, 320_000);

  it('plans nothing afterwards, reading the zone at most twice', async () => {
    proxy.clear();
    const plan = await runCli(['plan', dir], { env: env(), timeoutMs: 120_000 });
    expect(plan.code, plan.stdout.slice(-2000) + plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/No changes\./);
    console.log(
      `plan: ${proxy.requests.length} requests (${proxy.count('GET', ZONE_PATH)} GET of the zone): ${proxy.requests.map((r) => `${r.method} ${r.path}`).join(', ')}`,
    );
    // Twice, not once: the zone's list entry lacks soa_edit_api, api_rectify, … so the zone is read
    // for them (fields a list leaves out), and again for its rrsets; the two reads are not asked at
    // the same moment, so they do not share one GET. A per-pass read cache would make it one (open).
    expect(proxy.count('GET', ZONE_PATH)).toBeLessThanOrEqual(2);
    expect(proxy.count('PATCH')).toBe(0);
  }, 130_000);

  it(`changes the ttl of all ${RRSETS} rrsets with one PATCH`, async () => {
    rmSync(join(dir, 'main.yaml'));
    const again = scaleIntent(`${proxy.url}/api/v1`, RRSETS, 600);
    cpSync(join(again, 'main.yaml'), join(dir, 'main.yaml'));
    rmSync(again, { recursive: true, force: true });
    proxy.clear();
    const apply = await runCli(['apply', dir], { env: env(), timeoutMs: 300_000 });
    expect(apply.code, apply.stdout.slice(-2000) + apply.stderr).toBe(0);
    expect(proxy.count('PATCH', ZONE_PATH)).toBe(1);
    expect(passMs(apply.stdout)).toBeLessThan(PASS_BOUND_MS);
    const zone = await pdns.api('GET', `/servers/localhost/zones/${ZONE}`);
    const ttls = (zone.body as { rrsets: { type: string; ttl: number }[] }).rrsets
      .filter((r) => r.type === 'A')
      .map((r) => r.ttl);
    expect(new Set(ttls)).toEqual(new Set([600]));
  }, 320_000);

  it('deletes the rrsets removed from the intent with one PATCH, and leaves the zone', async () => {
    const half = Math.floor(RRSETS / 2);
    const kept = scaleIntent(`${proxy.url}/api/v1`, half, 600);
    cpSync(join(kept, 'main.yaml'), join(dir, 'main.yaml'));
    rmSync(kept, { recursive: true, force: true });
    proxy.clear();
    const apply = await runCli(['apply', dir, '--yes'], { env: env(), timeoutMs: 300_000 });
    expect(apply.code, apply.stdout.slice(-2000) + apply.stderr).toBe(0);
    expect(proxy.count('PATCH', ZONE_PATH)).toBe(1);
    const zone = await pdns.api('GET', `/servers/localhost/zones/${ZONE}`);
    expect(zone.status).toBe(200);
    const names = (zone.body as { rrsets: { type: string; name: string }[] }).rrsets
      .filter((r) => r.type === 'A')
      .map((r) => r.name);
    expect(names).toHaveLength(half);
  }, 320_000);
});

// A crash between sending a batch and settling its operations: every operation of the batch was
// journaled before the PATCH went out, so the next apply finds each rrset by its natural key and
// adopts it (or, when the PATCH never went out, sends them again, in one PATCH).
describe.skipIf(PDNS.skip)(`PowerDNS: kill -9 around a batch of rrsets${PDNS.note}`, () => {
  const N = 40;
  let pdns: PdnsHandle;
  let proxy: CountingProxy;
  beforeAll(async () => {
    pdns = await startPdns();
    proxy = await startCountingProxy(pdns.webUrl);
  });
  afterAll(async () => {
    await proxy?.stop();
    await pdns?.stop();
  });

  const CASES = [
    {
      at: 'after:journal:create@41',
      sent: 0,
      why: 'every operation journaled, the batch not sent yet',
    },
    // @1 is the zone's own create; the rrsets' come after it.
    { at: 'before:twin:create@2', sent: 1, why: 'the batch applied, no operation settled' },
    {
      at: 'after:settle:create@20',
      sent: 1,
      why: 'the batch applied, half its operations settled',
    },
  ] as const;

  it.each(CASES)(
    '$at ($why): the next apply converges, no rrset twice',
    async ({ at, sent }) => {
      await pdns.api('DELETE', `/servers/localhost/zones/${ZONE}`);
      const dir = scaleIntent(`${proxy.url}/api/v1`, N);
      try {
        proxy.clear();
        const crashed = await runCli(['apply', dir], {
          env: { PDNS_API_KEY: pdns.apiKey, TEND_CRASH_AT: at },
          timeoutMs: 120_000,
        });
        expect(crashed.code, crashed.stdout + crashed.stderr).not.toBe(0);
        expect(proxy.count('PATCH', ZONE_PATH), at).toBe(sent);

        proxy.clear();
        const apply = await runCli(['apply', dir], {
          env: { PDNS_API_KEY: pdns.apiKey },
          timeoutMs: 120_000,
        });
        expect(apply.code, apply.stdout.slice(-3000) + apply.stderr).toBe(0);
        expect(apply.stdout).toContain(`${N + 1} converged`);
        // Nothing sent twice when it had arrived. When it had not, recovery resends each operation
        // once its consistency window (counted from its own journal time) is over: they come due
        // within milliseconds of each other and go out in a few PATCHes (what came due while one was
        // in flight rides the next), never one per rrset.
        const resent = proxy.count('PATCH', ZONE_PATH);
        if (sent === 1) expect(resent).toBe(0);
        else {
          expect(resent).toBeGreaterThanOrEqual(1);
          expect(resent).toBeLessThanOrEqual(N / 4);
        }
        const zone = await pdns.api('GET', `/servers/localhost/zones/${ZONE}`);
        const a = (zone.body as { rrsets: { type: string; records: unknown[] }[] }).rrsets.filter(
          (r) => r.type === 'A',
        );
        expect(a).toHaveLength(N);
        for (const r of a) expect(r.records).toHaveLength(1);

        const plan = await runCli(['plan', dir], { env: { PDNS_API_KEY: pdns.apiKey } });
        expect(plan.code, plan.stdout + plan.stderr).toBe(0);
        expect(plan.stdout).toMatch(/No changes\./);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    300_000,
  );
});

// Issue 12, item 5: a stateful zone removed from the intent waits whole for --approve-destroy; its
// rrsets are not deleted first.
describe.skipIf(PDNS.skip)(`PowerDNS: a stateful zone removed from the intent${PDNS.note}`, () => {
  const N = 5;
  let pdns: PdnsHandle;
  let proxy: CountingProxy;
  let dir: string;
  beforeAll(async () => {
    pdns = await startPdns();
    proxy = await startCountingProxy(pdns.webUrl);
    dir = scaleIntent(`${proxy.url}/api/v1`, N, 300, true);
  });
  afterAll(async () => {
    await proxy?.stop();
    await pdns?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const tend = (args: string[]) =>
    runCli(args, { env: { PDNS_API_KEY: pdns.apiKey }, timeoutMs: 120_000 });

  it("shows the zone's nameservers as write-only, and refuses a change to them after create", async () => {
    const first = await tend(['plan', dir]);
    expect(first.stdout).toContain(
      `      nameservers: ["ns1.${ZONE}"]   # write-only: sent on create, never read back`,
    );
    const apply = await tend(['apply', dir]);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);

    const main = join(dir, 'main.yaml');
    const before = readFileSync(main, 'utf8');
    writeFileSync(main, before.replace(`nameservers: [ns1.${ZONE}]`, `nameservers: [ns2.${ZONE}]`));
    const plan = await tend(['plan', dir]);
    expect(plan.code, plan.stdout + plan.stderr).toBe(1);
    expect(plan.stdout + plan.stderr).toContain(
      'pdns.zones/scale: nameservers is write-only (sent on create, never returned by the platform) and has changed in the intent since Tend created the object; an update cannot change it',
    );
    // Put back, nothing to do.
    writeFileSync(main, before);
    const again = await tend(['plan', dir]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
  }, 300_000);

  it('is gated with its rrsets: nothing is deleted, and the plan says why', async () => {
    // Everything removed but the Provider.
    const main = join(dir, 'main.yaml');
    writeFileSync(main, readFileSync(main, 'utf8').split('\n---\n')[0]! + '\n');

    const plan = await tend(['plan', dir]);
    expect(plan.code, plan.stdout + plan.stderr).toBe(2);
    expect(plan.stdout).toContain(
      `gated: it lives under pdns.zones/scale, a stateful resource also removed: nothing of it is deleted until that deletion is approved; needs --approve-destroy`,
    );
    expect(plan.stdout).toContain(
      `Gated (destructive): pdns.zones/scale (and ${N} resources under it); re-run with --approve-destroy.`,
    );

    proxy.clear();
    const gated = await tend(['apply', dir, '--yes']);
    expect(gated.code, gated.stdout + gated.stderr).toBe(3);
    expect(gated.stdout).toContain(
      'deleting pdns.rrsets/h0 waits for the deletion of pdns.zones/scale, a stateful resource it lives under: approve with --approve-destroy',
    );
    expect(proxy.count('PATCH') + proxy.count('DELETE')).toBe(0);
    const zone = await pdns.api('GET', `/servers/localhost/zones/${ZONE}`);
    const a = (zone.body as { rrsets: { type: string }[] }).rrsets.filter((r) => r.type === 'A');
    expect(a).toHaveLength(N);
  }, 300_000);

  it('with approval, the rrsets go in one PATCH and then the zone', async () => {
    proxy.clear();
    const apply = await tend(['apply', dir, '--yes', '--approve-destroy']);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(proxy.count('PATCH', ZONE_PATH)).toBe(1);
    expect(proxy.count('DELETE', ZONE_PATH)).toBe(1);
    const last = proxy.requests.filter((r) => r.method !== 'GET').map((r) => r.method);
    expect(last).toEqual(['PATCH', 'DELETE']);
    expect((await pdns.api('GET', `/servers/localhost/zones/${ZONE}`)).status).toBe(404);
  }, 300_000);
});

// Issue 12, item 5: PowerDNS killed (SIGKILL) while its rrsets' PATCH is in flight. The apply fails
// naming the unreachable endpoint, records nothing as converged that was not, and the next apply
// after a restart settles what was left pending.
describe.skipIf(PDNS.skip)(`PowerDNS killed in the middle of an apply${PDNS.note}`, () => {
  const N = 20;
  let pdns: PdnsHandle;
  let proxy: CountingProxy;
  let restarted: { stop(): Promise<void> } | undefined;
  let dir: string;
  beforeAll(async () => {
    pdns = await startPdns();
    proxy = await startCountingProxy(pdns.webUrl);
    dir = scaleIntent(`${proxy.url}/api/v1`, N);
  });
  afterAll(async () => {
    await restarted?.stop();
    await proxy?.stop();
    await pdns?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const tend = (args: string[]) =>
    runCli(args, { env: { PDNS_API_KEY: pdns.apiKey }, timeoutMs: 180_000 });

  it('fails naming the unreachable server, and records nothing as converged that was not', async () => {
    proxy.onRequest(async (r) => {
      if (r.method !== 'PATCH') return;
      proxy.onRequest(undefined);
      await killPdns(pdns);
      proxy.refuse();
    });
    const apply = await tend(['apply', dir, '--json']);
    const out = apply.stdout + apply.stderr;
    expect(apply.code, out).toBe(1);
    const endpoint = `${proxy.url}/api/v1`;
    // Each rrset's operation fails naming the server that stopped answering.
    for (let i = 0; i < N; i++) {
      expect(out).toMatch(
        new RegExp(
          `"address":"pdns\\.rrsets/h${i}".*after the request was sent to ${endpoint.replaceAll('.', '\\.')}`,
        ),
      );
    }

    const status = await tend(['status', dir, '--json', '--offline']);
    const { resources } = JSON.parse(status.stdout) as {
      resources: { address: string; state: string }[];
    };
    const states = Object.fromEntries(resources.map((r) => [r.address, r.state]));
    expect(states['pdns.zones/scale']).toBe('converged');
    for (let i = 0; i < N; i++) expect(states[`pdns.rrsets/h${i}`], `h${i}`).not.toBe('converged');
    const history = await tend(['history', dir, '--json']);
    const { changes } = JSON.parse(history.stdout) as { changes: { address: string }[] };
    expect(changes.map((c) => c.address)).toEqual(['pdns.zones/scale']);
  }, 300_000);

  it('the next apply after a restart settles: every rrset once, the plan empty', async () => {
    restarted = await restartPdns(pdns);
    // The proxy is dead for good: talk to the restarted server directly.
    const main = join(dir, 'main.yaml');
    writeFileSync(main, readFileSync(main, 'utf8').replace(`${proxy.url}/api/v1`, pdns.apiUrl));
    const apply = await tend(['apply', dir]);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout).toContain(`${N + 1} converged`);
    const zone = await pdns.api('GET', `/servers/localhost/zones/${ZONE}`);
    const a = (zone.body as { rrsets: { type: string }[] }).rrsets.filter((r) => r.type === 'A');
    expect(a).toHaveLength(N);
    const plan = await tend(['plan', dir]);
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
  }, 300_000);
});
