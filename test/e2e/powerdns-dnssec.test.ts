import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCheck } from '../../src/checks/index.js';
import type { DnsCheckDecl } from '../../src/core/index.js';
import { runCli } from '../support/cli.js';
import { PDNS, startPdns, type PdnsHandle } from '../support/pdns.js';
import { pdnsIntent, type PdnsIntent } from '../support/pdns-intent.js';

// DNSSEC through the CLI against a real pdns_server (gsqlite3 with DNSSEC): a zone and its signing
// key (a cryptokey, identified by zone and algorithm) in intent; a `dns` check proves that the key
// the API reports is the DNSKEY the server answers with. The steps build on each other, in order.

interface StatusJson {
  resources: {
    address: string;
    state: string;
    checks: { name: string; kind: string; ok: boolean; message: string }[];
  }[];
}

interface ApiKey {
  id: number;
  active: boolean;
  algorithm: string;
  dnskey: string;
}

describe.skipIf(PDNS.skip)(`PowerDNS DNSSEC end to end (CLI, real pdns_server)${PDNS.note}`, () => {
  let pdns: PdnsHandle;
  let intent: PdnsIntent;
  const file = () => join(intent.dir, 'dnssec.yaml');

  const tend = (args: string[]) => runCli(args, { env: intent.env });

  /** The zone and its key; the key's check expects the key's own `dnskey` field, by reference. */
  function writeIntent(key: { algorithm: string; active: boolean }): void {
    writeFileSync(
      file(),
      `kind: Resource
type: pdns.zones
name: signed
spec:
  name: example.com.
  kind: Native
  nameservers: [ns1.example.com.]
lifecycle: { stateful: true }
---
kind: Resource
type: pdns.cryptokeys
name: signing
spec:
  zone_id: \${pdns.zones/signed.id}
  keytype: csk
  algorithm: ${key.algorithm}
  active: ${String(key.active)}
checks:
  - name: dnskey
    dns:
      server: ${pdns.dnsAddress}
      query: example.com.
      type: DNSKEY
      expect: ['\${pdns.cryptokeys/signing.dnskey}']
`,
    );
  }

  /** The zone's keys as PowerDNS reports them. */
  async function apiKeys(): Promise<ApiKey[]> {
    const r = await pdns.api('GET', '/servers/localhost/zones/example.com./cryptokeys');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body as ApiKey[];
  }

  /** What DNS serves now as the zone's DNSKEY rrset, as the dns check sees it. */
  async function servedKeys(expect: string[]) {
    const check: DnsCheckDecl = {
      kind: 'dns',
      name: 'probe',
      server: pdns.dnsAddress,
      query: 'example.com.',
      type: 'DNSKEY',
      expect,
      timeoutMs: 2000,
      source: { file: 'test', line: 1, column: 1 },
    };
    return runCheck(check, { observed: {}, desired: {}, resolve: (t) => t, now: () => new Date() });
  }

  async function status(): Promise<StatusJson> {
    const r = await tend(['status', intent.dir, '--json', '--offline']);
    return JSON.parse(r.stdout) as StatusJson;
  }

  async function planIsEmpty(): Promise<void> {
    const plan = await tend(['plan', intent.dir]);
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect(plan.stdout).toContain('No changes. 2 resources match the intent.');
  }

  beforeAll(async () => {
    pdns = await startPdns();
    intent = pdnsIntent(pdns, { onlyProvider: true });
  });
  afterAll(async () => {
    await pdns?.stop();
    intent?.cleanup();
  });

  it('applies a zone with a CSK; the DNSKEY the API reports is the one DNS serves', async () => {
    writeIntent({ algorithm: 'ECDSAP256SHA256', active: true });
    const apply = await tend(['apply', intent.dir]);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout).toContain('2 converged');
    expect(apply.stdout).toMatch(/✓ pdns\.cryptokeys\/signing\s+check dnskey passed/);

    const keys = await apiKeys();
    expect(keys).toEqual([
      expect.objectContaining({ active: true, algorithm: 'ECDSAP256SHA256', keytype: 'csk' }),
    ]);
    const dnskey = keys[0]!.dnskey;
    expect(dnskey).toMatch(/^257 3 13 /);
    expect(await servedKeys([dnskey])).toMatchObject({ ok: true });

    const { resources } = await status();
    expect(resources.map((r) => [r.address, r.state])).toEqual([
      ['pdns.zones/signed', 'converged'],
      ['pdns.cryptokeys/signing', 'converged'],
    ]);
    const [check] = resources.find((r) => r.address === 'pdns.cryptokeys/signing')!.checks;
    expect(check).toMatchObject({ kind: 'dns', ok: true });
    expect(check!.message).toContain(dnskey);

    // PowerDNS hands out the private key with every single-key read; Tend's memory never holds it.
    const one = await pdns.api(
      'GET',
      `/servers/localhost/zones/example.com./cryptokeys/${keys[0]!.id}`,
    );
    const secret = /PrivateKey: (\S+)/.exec((one.body as { privatekey: string }).privatekey)?.[1];
    expect(secret).toBeDefined();
    const store = join(intent.dir, '.tend');
    // Every file below it, the intent cache (.tend/cache) included.
    const files = readdirSync(store, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const bytes = readFileSync(f).toString('latin1');
      expect(bytes, f).not.toContain(secret);
      expect(bytes, f).not.toContain('Private-key-format');
    }
  });

  it('plans nothing afterwards', async () => {
    await planIsEmpty();
  });

  it('deactivates the key in place: an update of the same key, still published', async () => {
    const before = await apiKeys();
    writeIntent({ algorithm: 'ECDSAP256SHA256', active: false });
    const plan = await tend(['plan', intent.dir]);
    expect(plan.code, plan.stdout + plan.stderr).toBe(2);
    expect(plan.stdout).toMatch(/~ pdns\.cryptokeys\/signing\b/);
    expect(plan.stdout).not.toMatch(/-\/\+/);

    const apply = await tend(['apply', intent.dir]);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    const after = await apiKeys();
    expect(after).toEqual([{ ...before[0]!, active: false }]);
    const listed = await pdns.pdnsutil(['list-keys', 'example.com']);
    expect(listed.stdout).toMatch(/example\.com\s+CSK\s+Pub\s/);
    await planIsEmpty();
  });

  it('a new algorithm replaces the key: the new DNSKEY is served, the old one is deleted', async () => {
    const [old] = await apiKeys();
    writeIntent({ algorithm: 'ED25519', active: true });
    const plan = await tend(['plan', intent.dir]);
    expect(plan.code, plan.stdout + plan.stderr).toBe(2);
    expect(plan.stdout).toMatch(/-\/\+ pdns\.cryptokeys\/signing\b/);
    expect(plan.stdout).toContain(
      'algorithm: "ECDSAP256SHA256" → "ED25519"   # forces replacement',
    );

    // A replace deletes the old key: destructive, so it needs --yes (the key is not stateful: no gate).
    // The replacement's checks run once the old key is deleted (until then the zone serves both).
    const replaced = await tend(['apply', intent.dir, '--yes']);
    expect(replaced.code, replaced.stdout + replaced.stderr).toBe(0);
    expect(replaced.stdout).toMatch(
      /deleted example\.com\.\/\d+[\s\S]*✓ pdns\.cryptokeys\/signing\s+check dnskey passed/,
    );
    expect(replaced.stdout).toMatch(/\+ pdns\.cryptokeys\/signing\s+created example\.com\.\/\d+/);
    expect(replaced.stdout).toContain(`- pdns.cryptokeys/signing  deleted example.com./${old!.id}`);
    const keys = await apiKeys();
    expect(keys).toEqual([expect.objectContaining({ active: true, algorithm: 'ED25519' })]);
    expect(keys[0]!.id).not.toBe(old!.id);
    expect(keys[0]!.dnskey).toMatch(/^257 3 15 /);
    expect(await servedKeys([keys[0]!.dnskey])).toMatchObject({ ok: true });

    const apply = await tend(['apply', intent.dir]);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(/✓ pdns\.cryptokeys\/signing\s+check dnskey passed/);
    await planIsEmpty();
  });
});
