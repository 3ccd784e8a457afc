import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../support/cli.js';
import { PDNS, startPdns, type PdnsHandle } from '../support/pdns.js';
import { pdnsIntent, type PdnsIntent } from '../support/pdns-intent.js';

// PowerDNS autoprimaries, objects addressed by two path parameters together
// (`/servers/{server_id}/autoprimaries/{ip}/{nameserver}`, DELETE only; item-key.ts), managed end to
// end through the CLI against a real pdns_server from PowerDNS's own document: applied from empty, a
// second plan empty, one removed behind Tend's back and put back, removal from the intent deletes.
// Steps build on each other (one server, one intent directory), in order.

interface Autoprimary {
  ip: string;
  nameserver: string;
  account: string;
}

const primary = (name: string, ip: string, nameserver: string) => `kind: Resource
type: pdns.autoprimaries
name: ${name}
spec:
  ip: ${ip}
  nameserver: ${nameserver}
  account: ops
`;
const A = primary('a', '192.0.2.1', 'ns1.example.org');
// Same IP, another name server: a second object, told apart only by both parameters together.
const B = primary('b', '192.0.2.1', 'ns2.example.org');

describe.skipIf(PDNS.skip)(
  `PowerDNS autoprimaries end to end${PDNS.note}`,
  { timeout: 90_000 },
  () => {
    let pdns: PdnsHandle;
    let intent: PdnsIntent;
    const file = () => join(intent.dir, 'autoprimaries.yaml');

    const tend = (args: string[]): Promise<CliResult> => runCli(args, { env: intent.env });
    const listed = async (): Promise<Autoprimary[]> => {
      const r = await pdns.api('GET', '/servers/localhost/autoprimaries');
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (r.body as Autoprimary[]).sort((x, y) => x.nameserver.localeCompare(y.nameserver));
    };

    beforeAll(async () => {
      pdns = await startPdns();
      intent = pdnsIntent(pdns, { onlyProvider: true });
    });
    afterAll(async () => {
      await pdns?.stop();
      intent?.cleanup();
    });

    it('applies two autoprimaries sharing an IP from empty', async () => {
      writeFileSync(file(), `${A}---\n${B}`);
      const apply = await tend(['apply', intent.dir]);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      expect(apply.stdout).toContain('2 converged');
      expect(await listed()).toEqual([
        { ip: '192.0.2.1', nameserver: 'ns1.example.org', account: 'ops' },
        { ip: '192.0.2.1', nameserver: 'ns2.example.org', account: 'ops' },
      ]);
    });

    it('plans nothing afterwards', async () => {
      const plan = await tend(['plan', intent.dir]);
      expect(plan.code, plan.stdout + plan.stderr).toBe(0);
      expect(plan.stdout).toMatch(/No changes\. 2 resources match/);
    });

    it('one removed behind its back is seen and put back, the other untouched', async () => {
      const gone = await pdns.api(
        'DELETE',
        '/servers/localhost/autoprimaries/192.0.2.1/ns2.example.org',
      );
      expect(gone.status, JSON.stringify(gone.body)).toBe(204);
      // PowerDNS's reads see its writes (the overlay says x-tend-consistent-reads): an object not
      // listed is gone even though its create settled moments ago — the very next plan says so,
      // with no visibility window waited out (engine/observe.ts).
      const plan = await tend(['plan', intent.dir]);
      expect(plan.code, plan.stdout + plan.stderr).toBe(2);
      expect(plan.stdout).toMatch(/\+ pdns\.autoprimaries\/b\b/);
      expect(plan.stdout).not.toMatch(/pdns\.autoprimaries\/a\b/);
      const apply = await tend(['apply', intent.dir]);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      expect((await listed()).map((p) => p.nameserver)).toEqual([
        'ns1.example.org',
        'ns2.example.org',
      ]);
    });

    it('removed from the intent, it is deleted at its two-parameter address', async () => {
      writeFileSync(file(), A);
      const apply = await tend(['apply', intent.dir, '--yes']);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      expect(await listed()).toEqual([
        { ip: '192.0.2.1', nameserver: 'ns1.example.org', account: 'ops' },
      ]);
      const plan = await tend(['plan', intent.dir]);
      expect(plan.code, plan.stdout + plan.stderr).toBe(0);
      expect(plan.stdout).toMatch(/No changes\. 1 resource match/);
    });
  },
);
