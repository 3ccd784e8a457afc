import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { PDNS, startPdns, type PdnsHandle } from '../support/pdns.js';
import { pdnsIntent, type PdnsIntent } from '../support/pdns-intent.js';

// `tend import` on a PowerDNS server that already has zones (made with pdnsutil and the raw API,
// as an operator would have): the intent it writes plans empty.

describe.skipIf(PDNS.skip)(`tend import from a real pdns_server${PDNS.note}`, () => {
  let pdns: PdnsHandle;
  let intent: PdnsIntent;

  async function pdnsutil(...args: string[]) {
    const r = await pdns.pdnsutil(args);
    expect(r.code, `pdnsutil ${args.join(' ')}: ${r.stderr}`).toBe(0);
  }

  beforeAll(async () => {
    pdns = await startPdns();
    intent = pdnsIntent(pdns, { onlyProvider: true });
    await pdnsutil('create-zone', 'example.com', 'ns1.example.com');
    await pdnsutil('add-record', 'example.com', 'www', 'A', '300', '192.0.2.1', '192.0.2.2');
    await pdnsutil('add-record', 'example.com', 'www', 'AAAA', '300', '2001:db8::1');
    await pdnsutil('add-record', 'example.com', 'docs', 'CNAME', '300', 'www.example.com.');
    await pdnsutil('add-record', 'example.com', '@', 'MX', '3600', '10 mail.example.com.');
    await pdnsutil('add-record', 'example.com', '@', 'TXT', '300', '"v=spf1 mx -all"');
    await pdnsutil('set-meta', 'example.com', 'ALLOW-AXFR-FROM', '192.0.2.0/24');
    await pdnsutil('generate-tsig-key', 'xfr-key', 'hmac-sha256');
    const zone = await pdns.api('POST', '/servers/localhost/zones', {
      name: 'Example.NET.',
      kind: 'Native',
      nameservers: ['ns1.example.net.'],
      rrsets: [
        {
          name: 'api.example.net.',
          type: 'A',
          ttl: 60,
          records: [{ content: '198.51.100.1', disabled: false }],
        },
      ],
    });
    expect(zone.status, JSON.stringify(zone.body)).toBe(201);
  });
  afterAll(async () => {
    await pdns?.stop();
    intent?.cleanup();
  });

  it('writes intent for the existing zones, rrsets, TSIG key and metadata, which then plans empty', async () => {
    const imported = await runCli(['import', intent.dir, '--provider', 'pdns'], {
      env: intent.env,
    });
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);

    const text = readFileSync(join(intent.dir, 'pdns-import.yaml'), 'utf8');
    const docs = parseAllDocuments(text).map((d) => d.toJS() as Record<string, unknown>);
    const addresses = docs.map((d) => `${String(d['type'])}/${String(d['name'])}`);
    expect(addresses).toEqual(
      expect.arrayContaining([
        'pdns.zones/example_com',
        'pdns.zones/example_net',
        'pdns.rrsets/www_example_com_a',
        'pdns.rrsets/www_example_com_aaaa',
        'pdns.rrsets/docs_example_com_cname',
        'pdns.rrsets/example_com_mx',
        'pdns.rrsets/example_com_txt',
        'pdns.rrsets/api_example_net_a',
        'pdns.rrsets/example_com_ns',
        'pdns.rrsets/example_net_ns',
        'pdns.tsigkeys/xfr-key',
        'pdns.metadata/allow-axfr-from',
      ]),
    );
    // Each zone's SOA is PowerDNS's (the overlay's x-tend-import-exclude), and left out.
    expect(addresses.filter((a) => a.endsWith('_soa'))).toEqual([]);
    expect(text).not.toMatch(/type: SOA/);
    expect(imported.stdout).toContain(
      'left out 2 pdns.rrsets objects the platform owns (type = SOA: PowerDNS owns the SOA and rewrites its serial on every change (SOA-EDIT-API))',
    );
    const www = docs.find((d) => d['name'] === 'www_example_com_a')!;
    expect(www['spec']).toMatchObject({
      zone_id: '${pdns.zones/example_com.id}',
      name: 'www.example.com.',
      type: 'A',
      ttl: 300,
    });
    expect(docs.find((d) => d['name'] === 'allow-axfr-from')!['spec']).toEqual({
      zone_id: '${pdns.zones/example_com.id}',
      kind: 'ALLOW-AXFR-FROM',
      metadata: ['192.0.2.0/24'],
    });
    // The zone's serials are the server's; the TSIG secret is never read back into intent.
    expect(text).not.toMatch(/serial/);
    const key = await pdns.api('GET', '/servers/localhost/tsigkeys/xfr-key.');
    expect(text).not.toContain((key.body as { key: string }).key);

    const plan = await runCli(['plan', intent.dir], { env: intent.env });
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect(plan.stdout).toContain(`No changes. ${docs.length} resources match the intent.`);
  });

  it('a change to imported intent applies, in zones made with pdnsutil and through the API, and the plan is empty again', async () => {
    // PowerDNS rewrites the SOA serial of a zone made through the API (SOA-EDIT-API) on every edit,
    // of one made with pdnsutil not. The SOA rrsets were left out of the import (the overlay's
    // x-tend-import-exclude), so neither shows as drift and Tend never writes a serial back.
    const soaBefore = await pdns.api('GET', '/servers/localhost/zones/example.net.');
    const serialBefore = (soaBefore.body as { serial: number }).serial;
    const file = join(intent.dir, 'pdns-import.yaml');
    const before = readFileSync(file, 'utf8');
    const ttl = (name: string, from: number, to: number) => (text: string) =>
      text.replace(
        new RegExp(`(name: ${name}\\nspec:\\n(?: {2}.*\\n)*? {2}ttl: )${from}\\n`),
        `$1${to}\n`,
      );
    const after = ttl('api_example_net_a', 60, 120)(ttl('www_example_com_a', 300, 120)(before));
    expect(after.match(/ttl: 120\n/g)).toHaveLength(2);
    writeFileSync(file, after);
    const apply = await runCli(['apply', intent.dir], { env: intent.env });
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(/~ pdns\.rrsets\/api_example_net_a\s+updated/);
    expect(apply.stdout).toMatch(/~ pdns\.rrsets\/www_example_com_a\s+updated/);

    // The API zone's serial moved on; Tend left it where PowerDNS put it.
    const zone = await pdns.api('GET', '/servers/localhost/zones/example.net.');
    const { serial, rrsets } = zone.body as {
      serial: number;
      rrsets: { name: string; type: string; ttl: number }[];
    };
    expect(serial).toBeGreaterThan(serialBefore);
    expect(rrsets.find((r) => r.type === 'A' && r.name === 'api.example.net.')?.ttl).toBe(120);
    const plan = await runCli(['plan', intent.dir], { env: intent.env });
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    const again = await pdns.api('GET', '/servers/localhost/zones/example.net.');
    expect((again.body as { serial: number }).serial).toBe(serial);
  });
});
