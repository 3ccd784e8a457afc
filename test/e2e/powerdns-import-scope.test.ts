import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { PDNS, startPdns, type PdnsHandle } from '../support/pdns.js';
import { pdnsIntent, type PdnsIntent } from '../support/pdns-intent.js';

// `tend import` with a scope, on a real PowerDNS holding two zones (one made with pdnsutil, one
// through the API), their records and metadata, and a TSIG key: each scoped import writes exactly
// what was asked — checked in the file it writes — and plans empty; every bad flag is refused with
// a message saying what would be right, writing nothing. The steps build on each other, in order.

type Doc = Record<string, unknown>;

describe.skipIf(PDNS.skip)(`tend import with a scope, real pdns_server${PDNS.note}`, () => {
  let pdns: PdnsHandle;
  let intent: PdnsIntent;
  const tend = (args: string[]) => runCli(args, { env: intent.env });

  async function pdnsutil(...args: string[]) {
    const r = await pdns.pdnsutil(args);
    expect(r.code, `pdnsutil ${args.join(' ')}: ${r.stderr}`).toBe(0);
  }
  /** The documents of a file the import wrote, as `type/name` → spec. */
  function written(file: string): Map<string, Doc> {
    const docs = parseAllDocuments(readFileSync(join(intent.dir, file), 'utf8')).map(
      (d) => d.toJS() as Doc,
    );
    return new Map(
      docs.map((d) => [`${String(d['type'])}/${String(d['name'])}`, d['spec'] as Doc]),
    );
  }
  async function planIsEmpty(): Promise<void> {
    const plan = await tend(['plan', intent.dir]);
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/No changes\./);
  }
  const yamlFiles = () =>
    readdirSync(intent.dir)
      .filter((f) => f.endsWith('.yaml'))
      .sort();

  beforeAll(async () => {
    pdns = await startPdns();
    intent = pdnsIntent(pdns, { onlyProvider: true });
    await pdnsutil('create-zone', 'example.com', 'ns1.example.com');
    await pdnsutil('add-record', 'example.com', 'www', 'A', '300', '192.0.2.1');
    await pdnsutil('add-record', 'example.com', 'docs', 'CNAME', '300', 'www.example.com.');
    await pdnsutil('set-meta', 'example.com', 'ALLOW-AXFR-FROM', '192.0.2.0/24');
    await pdnsutil('generate-tsig-key', 'xfr-key', 'hmac-sha256');
    const zone = await pdns.api('POST', '/servers/localhost/zones', {
      name: 'example.net.',
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

  it('--type zones --match example.com. writes that zone alone', async () => {
    const r = await tend([
      'import',
      intent.dir,
      '--provider',
      'pdns',
      '--type',
      'zones',
      '--match',
      'example.com.',
    ]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('imported 1 object of pdns into');
    expect(r.stdout).toContain('matching "example.com."');
    expect(r.stdout).toContain('(1 outside the scope left out)');
    const docs = written('pdns-import.yaml');
    expect([...docs.keys()]).toEqual(['pdns.zones/example_com']);
    expect(docs.get('pdns.zones/example_com')).toMatchObject({
      name: 'example.com.',
      kind: 'Native',
    });
    expect(readFileSync(join(intent.dir, 'pdns-import.yaml'), 'utf8')).toContain(
      "tend import --provider pdns --type zones --match 'example.com.'",
    );
    await planIsEmpty();
  });

  it('--under pdns.zones/example_com writes that zone’s rrsets and metadata, referencing it, and nothing else', async () => {
    const r = await tend([
      'import',
      intent.dir,
      '--provider',
      'pdns',
      '--under',
      'pdns.zones/example_com',
      '--out',
      join(intent.dir, 'com.yaml'),
    ]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const docs = written('com.yaml');
    expect([...docs.keys()].sort()).toEqual([
      'pdns.metadata/allow-axfr-from',
      'pdns.rrsets/docs_example_com_cname',
      'pdns.rrsets/example_com_ns',
      'pdns.rrsets/www_example_com_a',
    ]);
    for (const spec of docs.values()) expect(spec['zone_id']).toBe('${pdns.zones/example_com.id}');
    // The SOA is PowerDNS's, left out as in a whole import.
    expect(r.stdout).toContain('left out 1 pdns.rrsets object the platform owns (type = SOA');
    await planIsEmpty();
  });

  it('--match on ids takes a zone and everything in it at once', async () => {
    const r = await tend([
      'import',
      intent.dir,
      '--provider',
      'pdns',
      '--match',
      '*example.net.*',
      '--out',
      join(intent.dir, 'net.yaml'),
    ]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const docs = written('net.yaml');
    expect([...docs.keys()].sort()).toEqual([
      // A zone made through the API carries its SOA-EDIT-API setting as metadata too.
      'pdns.metadata/soa-edit-api',
      'pdns.rrsets/api_example_net_a',
      'pdns.rrsets/example_net_ns',
      'pdns.zones/example_net',
    ]);
    expect(docs.get('pdns.rrsets/api_example_net_a')!['zone_id']).toBe(
      '${pdns.zones/example_net.id}',
    );
    await planIsEmpty();
  });

  it('a scope that selects nothing writes nothing and says so', async () => {
    const before = yamlFiles();
    const r = await tend([
      'import',
      intent.dir,
      '--provider',
      'pdns',
      '--match',
      'nothing.example.',
      '--out',
      join(intent.dir, 'nothing.yaml'),
    ]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^nothing to import from pdns matching "nothing\.example\.": 0 already declared, 1 outside the scope$/m,
    );
    expect(yamlFiles()).toEqual(before);
  });

  const bad: { name: string; args: string[]; message: string }[] = [
    {
      name: 'an empty --match',
      args: ['--match', ''],
      message: 'error: --match needs a pattern, got an empty one',
    },
    {
      name: 'an --under that is not an address',
      args: ['--under', 'example.com.'],
      message:
        'error: --under takes the address of a declared resource, <provider>.<type>/<name>, not "example.com."',
    },
    {
      name: 'an --under of another provider',
      args: ['--under', 'dns.zones/example_com'],
      message:
        'error: --under dns.zones/example_com is a resource of provider dns, but --provider is pdns',
    },
    {
      name: 'an --under of a type nothing lives under',
      args: ['--under', 'pdns.tsigkeys/xfr-key'],
      message:
        'error: --under pdns.tsigkeys/xfr-key: nothing of pdns lives under a tsigkeys object; types with a parent: rrsets (under zones), metadata (under zones), cryptokeys (under zones)',
    },
    {
      name: 'an --under the intent does not declare',
      args: ['--under', 'pdns.zones/example_org'],
      message: 'no such resource is declared in',
    },
    {
      name: 'a --type that does not live under --under',
      args: ['--under', 'pdns.zones/example_com', '--type', 'tsigkeys'],
      message:
        'error: --type pdns.tsigkeys does not live under pdns.zones/example_com: nothing of it can be its child; types under it: pdns.rrsets, pdns.metadata, pdns.cryptokeys',
    },
  ];
  it.each(bad)('refuses $name (exit 1, nothing written)', async (c) => {
    const before = yamlFiles();
    const out = join(intent.dir, 'bad.yaml');
    const r = await tend(['import', intent.dir, '--provider', 'pdns', '--out', out, ...c.args]);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toContain(c.message);
    expect(yamlFiles()).toEqual(before);
  });

  it('refuses an --under whose object does not exist yet, saying to apply first', async () => {
    const file = join(intent.dir, 'pending.yaml');
    writeFileSync(
      file,
      'kind: Resource\ntype: pdns.zones\nname: pending\nspec:\n  name: pending.example.\n  kind: Native\n',
    );
    try {
      const r = await tend([
        'import',
        intent.dir,
        '--provider',
        'pdns',
        '--under',
        'pdns.zones/pending',
        '--out',
        join(intent.dir, 'bad.yaml'),
      ]);
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stderr).toContain(
        'error: --under pdns.zones/pending: its object does not exist on pdns yet, so nothing lives under it',
      );
      expect(r.stderr).toContain('hint: apply the intent first');
      expect(existsSync(join(intent.dir, 'pdns-import.yaml'))).toBe(true); // the first import's, untouched
    } finally {
      rmSync(file);
    }
  });
});
