import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../support/cli.js';
import { startCountingProxy, type CountingProxy } from '../support/counting-proxy.js';
import { PDNS, startPdns, type PdnsHandle } from '../support/pdns.js';

// Issue 12, item 5: PowerDNS at scale. One zone with 1 000 rrsets applied through the real CLI
// against a real pdns_server, every request counted by a proxy in front of it: the rrsets of one
// zone go in one PATCH per zone per pass (not one per rrset), observation reads the zone once, and
// the whole apply takes seconds (it took ~145 s with one PATCH and two zone reads per rrset).

/** How many rrsets; TEND_SCALE_RRSETS overrides it (to measure smaller or larger zones by hand). */
const RRSETS = Number(process.env['TEND_SCALE_RRSETS'] ?? 1000);
/** Generous: the batched apply takes ~3 s here; one request per rrset took ~145 s. */
const APPLY_BOUND_MS = 10_000;

const ZONE = 'scale.test.';
const ZONE_PATH = /\/zones\/scale\.test\.$/;

/** An intent directory: the Provider pointed at `endpoint`, a zone and `n` A rrsets. */
export function scaleIntent(endpoint: string, n: number): string {
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
        '  ttl: 300',
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
      `apply of ${RRSETS} rrsets: ${Math.round(ms)} ms, ${proxy.requests.length} requests (${patches} PATCH, ${zoneReads} GET of the zone)`,
    );
    // One request per rrset would be RRSETS PATCHes; the batch is one (a second one only when some
    // rrsets became ready while the first was in flight).
    expect(patches).toBeGreaterThanOrEqual(1);
    expect(patches).toBeLessThanOrEqual(3);
    expect(zoneReads).toBeLessThanOrEqual(10);
    expect(ms).toBeLessThan(APPLY_BOUND_MS);

    const zone = await pdns.api('GET', `/servers/localhost/zones/${ZONE}`);
    const rrsets = (zone.body as { rrsets: { type: string }[] }).rrsets;
    expect(rrsets.filter((r) => r.type === 'A')).toHaveLength(RRSETS);
  }, 320_000);

  it('plans nothing afterwards, reading the zone once', async () => {
    proxy.clear();
    const plan = await runCli(['plan', dir], { env: env(), timeoutMs: 120_000 });
    expect(plan.code, plan.stdout.slice(-2000) + plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/No changes\./);
    console.log(
      `plan: ${proxy.requests.length} requests (${proxy.count('GET', ZONE_PATH)} GET of the zone): ${proxy.requests.map((r) => `${r.method} ${r.path}`).join(', ')}`,
    );
    expect(proxy.count('GET', ZONE_PATH)).toBe(1);
    expect(proxy.count('PATCH')).toBe(0);
  }, 130_000);
});
