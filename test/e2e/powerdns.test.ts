import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCheck } from '../../src/checks/index.js';
import type { DnsCheckDecl } from '../../src/core/index.js';
import { runCli, startCli, type CliProcess } from '../support/cli.js';
import { PDNS, startPdns, type PdnsHandle } from '../support/pdns.js';
import { pdnsIntent, type PdnsIntent } from '../support/pdns-intent.js';

// Issue 4, "what it must show", through the real CLI against a real PowerDNS Authoritative server
// managed from its official Swagger 2.0 document plus examples/powerdns/specs/pdns.overlay.yaml.
// The steps build on each other (one server, one intent directory), in order.

interface StatusJson {
  resources: {
    address: string;
    state: string;
    checks: { name: string; kind: string; ok: boolean; message: string }[];
  }[];
}

describe.skipIf(PDNS.skip)(`PowerDNS end to end (CLI, real pdns_server)${PDNS.note}`, () => {
  let pdns: PdnsHandle;
  let intent: PdnsIntent;
  let run: CliProcess | undefined;

  /** What DNS serves now for a name and type, as the dns check sees it. */
  async function served(query: string, type: string, expect: string[]) {
    const check: DnsCheckDecl = {
      kind: 'dns',
      name: 'probe',
      server: pdns.dnsAddress,
      query,
      type,
      expect,
      timeoutMs: 2000,
      source: { file: 'test', line: 1, column: 1 },
    };
    return runCheck(check, { observed: {}, desired: {}, resolve: (t) => t, now: () => new Date() });
  }

  const tend = (args: string[]) => runCli(args, { env: intent.env });

  async function status(): Promise<StatusJson> {
    const r = await tend(['status', intent.dir, '--json', '--offline']);
    return JSON.parse(r.stdout) as StatusJson;
  }

  beforeAll(async () => {
    pdns = await startPdns();
    intent = pdnsIntent(pdns);
  });
  afterAll(async () => {
    await run?.stop('SIGKILL');
    await pdns?.stop();
    intent?.cleanup();
  });

  it('applies a zone with A, AAAA, CNAME, MX and TXT rrsets, a TSIG key and a metadata entry; the dns checks pass', async () => {
    const rrsets = intent.docs().filter((d) => d['type'] === 'pdns.rrsets');
    const types = rrsets.map((d) => (d['spec'] as { type: string }).type).sort();
    expect(types).toEqual(['A', 'AAAA', 'CNAME', 'MX', 'TXT']);
    const total = intent.docs().filter((d) => d['kind'] === 'Resource').length;

    const apply = await tend(['apply', intent.dir]);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout).toContain(`${total} converged`);
    for (const d of rrsets) {
      expect(apply.stdout).toContain(`✓ pdns.rrsets/${String(d['name'])}  check served passed`);
    }

    const { resources } = await status();
    expect(resources.map((r) => [r.address, r.state])).toEqual(
      resources.map((r) => [r.address, 'converged']),
    );
    const checks = resources.flatMap((r) => r.checks);
    expect(checks).toHaveLength(5);
    for (const c of checks) expect(c, c.message).toMatchObject({ kind: 'dns', ok: true });

    // What the API accepted, read back from the server itself.
    const zone = await pdns.api('GET', '/servers/localhost/zones/example.org.');
    expect(zone.status).toBe(200);
    const keys = await pdns.api('GET', '/servers/localhost/tsigkeys');
    expect(keys.body).toEqual([
      expect.objectContaining({ name: 'xfr-key', algorithm: 'hmac-sha256' }),
    ]);
    const meta = await pdns.api(
      'GET',
      '/servers/localhost/zones/example.org./metadata/ALLOW-AXFR-FROM',
    );
    expect(meta.body).toMatchObject({ kind: 'ALLOW-AXFR-FROM', metadata: ['192.0.2.0/24'] });
    expect(await served('www.example.org', 'AAAA', ['2001:db8::10'])).toMatchObject({ ok: true });
  });

  it('plans nothing afterwards: server-owned serials do not show as drift', async () => {
    const plan = await tend(['plan', intent.dir]);
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/No changes\. \d+ resources match the intent\./);
  });

  it('tend run reverts an rrset changed out of band with pdnsutil, and leaves an rrset it does not manage alone', async () => {
    // Someone's record Tend does not declare, made before Tend starts watching.
    const ftp = await pdns.pdnsutil([
      'add-record',
      'example.org',
      'ftp',
      'A',
      '300',
      '198.51.100.20',
    ]);
    expect(ftp.code, ftp.stderr).toBe(0);
    // PowerDNS has no audit feed: Tend polls, here every second.
    run = startCli(['run', intent.dir, '--interval', '1'], { env: intent.env });
    await run.waitFor(/pass 1 done/, 30_000);

    const changed = await pdns.pdnsutil([
      'replace-rrset',
      'example.org',
      'www',
      'A',
      '300',
      '198.51.100.99',
    ]);
    expect(changed.code, changed.stderr).toBe(0);
    expect(await served('www.example.org', 'A', ['198.51.100.99'])).toMatchObject({ ok: true });

    await run.waitFor(/~ pdns\.rrsets\/www-a\s+updated/, 20_000);
    await run.waitFor(/✓ pdns\.rrsets\/www-a\s+check served passed/, 20_000);
    expect(await served('www.example.org', 'A', ['192.0.2.10'])).toMatchObject({ ok: true });
    expect(await served('ftp.example.org', 'A', ['198.51.100.20'])).toMatchObject({ ok: true });
    expect(await run.stop()).toBe(0);
    run = undefined;

    const history = await tend(['history', intent.dir, '--json', '--address', 'pdns.rrsets/www-a']);
    const { changes } = JSON.parse(history.stdout) as { changes: { actor: string }[] };
    expect(changes.map((c) => c.actor)).toContain('unknown');
  });

  it('a zone rename plans a replace with every rrset in its blast radius and stops at the gate', async () => {
    intent.edit((text) => text.replaceAll('example.org', 'example.net'));
    const plan = await tend(['plan', intent.dir]);
    expect(plan.code, plan.stdout + plan.stderr).toBe(2);
    expect(plan.stdout).toMatch(/-\/\+ pdns\.zones\/example\b/);
    const dependents = intent
      .docs()
      .filter((d) => d['type'] === 'pdns.rrsets' || d['type'] === 'pdns.metadata')
      .map((d) => `${String(d['type'])}/${String(d['name'])}`);
    const radius = /blast radius: (.*)/.exec(plan.stdout)?.[1] ?? '';
    for (const address of dependents) expect(radius).toContain(address);

    // Stopping at the gate means touching nothing that depends on the gated zone either: its records
    // are still served as they were.
    const gated = await tend(['apply', intent.dir, '--yes']);
    expect(gated.code, gated.stdout + gated.stderr).toBe(3);
    expect((await pdns.api('GET', '/servers/localhost/zones/example.org.')).status).toBe(200);
    expect((await pdns.api('GET', '/servers/localhost/zones/example.net.')).status).toBe(404);
    expect(await served('www.example.org', 'A', ['192.0.2.10'])).toMatchObject({ ok: true });
    expect(await served('example.org', 'MX', ['10 mail.example.org'])).toMatchObject({ ok: true });
  });

  it('with approval the rename converges and the checks pass against the new zone', async () => {
    const apply = await tend(['apply', intent.dir, '--yes', '--approve-destroy']);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    const { resources } = await status();
    for (const r of resources) expect(r.state, r.address).toBe('converged');
    const checks = resources.flatMap((r) => r.checks);
    expect(checks).toHaveLength(5);
    for (const c of checks) expect(c, c.message).toMatchObject({ ok: true });
    expect(checks.map((c) => c.message).join('\n')).toContain('example.net');

    expect((await pdns.api('GET', '/servers/localhost/zones/example.org.')).status).toBe(404);
    expect(await served('www.example.net', 'A', ['192.0.2.10'])).toMatchObject({ ok: true });
    const plan = await tend(['plan', intent.dir]);
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
  });
});
