import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { PDNS, startPdns, type PdnsHandle } from '../support/pdns.js';
import {
  pdnsIntent,
  startPdnsProxy,
  type PdnsIntent,
  type PdnsProxy,
} from '../support/pdns-intent.js';

// Values written differently from how PowerDNS stores them settle in one pass: a non-canonical AAAA,
// record targets without the final dot (which PowerDNS refuses as written: Tend sends them canonical),
// and zone settings the zone list does not return (soa_edit_api, api_rectify: read from the zone's
// own GET). After the first apply, nothing is written again: no PATCH or PUT reaches the server
// (a recording proxy in front of it sees every request) and the zone's serial stays where it is.

const ZONE = `
kind: Resource
type: pdns.zones
name: settle
spec:
  name: Settle.Example.
  kind: Native
  nameservers: [ns1.settle.example.]
  soa_edit_api: INCEPTION-INCREMENT
  api_rectify: true
  soa_edit: INCEPTION-EPOCH
`;
const rrset = (name: string, type: string, ...contents: string[]) => `
kind: Resource
type: pdns.rrsets
name: ${name}
spec:
  zone_id: \${pdns.zones/settle.id}
  name: ${name}.settle.example
  type: ${type}
  ttl: 300
  records:
${contents.map((c) => `    - content: '${c}'`).join('\n')}
`;

describe.skipIf(PDNS.skip)(`PowerDNS values settle in one pass${PDNS.note}`, () => {
  let pdns: PdnsHandle;
  let proxy: PdnsProxy;
  let intent: PdnsIntent;
  const tend = (args: string[]) => runCli(args, { env: intent.env });
  const serial = async () =>
    ((await pdns.api('GET', '/servers/localhost/zones/settle.example.')).body as { serial: number })
      .serial;

  beforeAll(async () => {
    pdns = await startPdns();
    proxy = await startPdnsProxy(pdns);
    intent = pdnsIntent(pdns, { onlyProvider: true, endpoint: proxy.apiUrl });
    intent.edit(
      (text) =>
        `${text}---${ZONE}---${rrset('v6', 'AAAA', '2001:DB8:0:0::1', '2001:0db8::0002')}---${rrset(
          'alias',
          'CNAME',
          'Target.Settle.Example',
        )}---${rrset('mail', 'MX', '10 Mail.settle.example', '20 mx2.settle.example.')}---${rrset(
          'sip',
          'SRV',
          '0 5 5060 Sip.settle.example',
        )}---${rrset('v4', 'A', '192.0.2.1')}`,
    );
  });
  afterAll(async () => {
    await proxy?.stop();
    await pdns?.stop();
    intent?.cleanup();
  });

  it('applies from empty: the server stores the canonical spellings', async () => {
    const apply = await tend(['apply', intent.dir]);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout).toContain('6 converged');
    const zone = (await pdns.api('GET', '/servers/localhost/zones/settle.example.')).body as {
      soa_edit_api: string;
      api_rectify: boolean;
      soa_edit: string;
      rrsets: { name: string; type: string; records: { content: string }[] }[];
    };
    expect(zone).toMatchObject({
      soa_edit_api: 'INCEPTION-INCREMENT',
      api_rectify: true,
      soa_edit: 'INCEPTION-EPOCH',
    });
    const contents = (type: string) =>
      zone.rrsets
        .filter((r) => r.type === type)
        .flatMap((r) => r.records.map((x) => x.content))
        .sort();
    expect(contents('AAAA')).toEqual(['2001:db8::1', '2001:db8::2']);
    expect(contents('CNAME')).toEqual(['target.settle.example.']);
    expect(contents('MX')).toEqual(['10 mail.settle.example.', '20 mx2.settle.example.']);
    expect(contents('SRV')).toEqual(['0 5 5060 sip.settle.example.']);
  });

  it('the next plan is empty, and the zone list is completed by one read of the zone', async () => {
    proxy.clear();
    const plan = await tend(['plan', intent.dir]);
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect(plan.stdout).toContain('No changes. 6 resources match the intent.');
    expect(proxy.writes()).toEqual([]);
    const zoneReads = proxy
      .requests()
      .filter((r) => r === 'GET /api/v1/servers/localhost/zones/settle.example.');
    // One for the zone's own fields, at most one more for its rrsets (never one per rrset).
    expect(zoneReads.length).toBeGreaterThanOrEqual(1);
    expect(zoneReads.length).toBeLessThanOrEqual(2);
  });

  it('a second apply sends nothing: no PATCH, no PUT, and no serial bump', async () => {
    const before = await serial();
    proxy.clear();
    const apply = await tend(['apply', intent.dir]);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout).not.toMatch(/updated|created/);
    expect(proxy.writes()).toEqual([]);
    expect(await serial()).toBe(before);
  });

  it('a real change is still seen: an address changed out of band is put back', async () => {
    const changed = await pdns.pdnsutil([
      'replace-rrset',
      'settle.example',
      'v6',
      'AAAA',
      '300',
      '2001:db8::1',
      '2001:db8::3',
    ]);
    expect(changed.code, changed.stderr).toBe(0);
    proxy.clear();
    const apply = await tend(['apply', intent.dir]);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(/~ pdns\.rrsets\/v6\s+updated/);
    expect(proxy.writes()).toEqual(['PATCH /api/v1/servers/localhost/zones/settle.example.']);
    const plan = await tend(['plan', intent.dir]);
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
  });

  it('a zone setting changed out of band (soa_edit_api) is seen through the zone read, and put back', async () => {
    const put = await pdns.api('PUT', '/servers/localhost/zones/settle.example.', {
      soa_edit_api: 'DEFAULT',
    });
    expect(put.status).toBe(204);
    const plan = await tend(['plan', intent.dir]);
    expect(plan.code, plan.stdout + plan.stderr).toBe(2);
    expect(plan.stdout).toMatch(/~ pdns\.zones\/settle/);
    expect(plan.stdout).toContain('soa_edit_api');
    proxy.clear();
    const apply = await tend(['apply', intent.dir]);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(proxy.writes()).toEqual(['PUT /api/v1/servers/localhost/zones/settle.example.']);
    const zone = (await pdns.api('GET', '/servers/localhost/zones/settle.example.')).body as {
      soa_edit_api: string;
    };
    expect(zone.soa_edit_api).toBe('INCEPTION-INCREMENT');
    const again = await tend(['plan', intent.dir]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
  });
});
