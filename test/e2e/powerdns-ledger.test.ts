import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { PDNS, startPdns, type PdnsHandle } from '../support/pdns.js';
import { pdnsIntent, type PdnsIntent } from '../support/pdns-intent.js';

// Issue 11, "what it must show": against a real PowerDNS (no audit feed), what another actor does
// is recorded from what Tend sees — on normalised values, so records PowerDNS returns in another
// order are not a change, while a deletion is one, recorded once.

interface Entry {
  seq: number;
  actor: string;
  source: string;
  action: string;
  address?: string;
  fields: string[];
  decision?: { decision: string; rule: string; reason: string };
}

describe.skipIf(PDNS.skip)(
  `PowerDNS: the ledger records what changed, not how it was listed${PDNS.note}`,
  () => {
    let pdns: PdnsHandle;
    let intent: PdnsIntent;
    const tend = (args: string[]) => runCli(args, { env: intent.env });
    const history = async (): Promise<Entry[]> => {
      const r = await tend(['history', intent.dir, '--json', '--limit', '500']);
      return (JSON.parse(r.stdout) as { changes: Entry[] }).changes;
    };
    const rrset = '/servers/localhost/zones/ledger.example.';

    beforeAll(async () => {
      pdns = await startPdns();
      intent = pdnsIntent(pdns, { onlyProvider: true });
      // Records declared out of PowerDNS's order: it stores and returns them sorted.
      writeFileSync(
        join(intent.dir, 'zone.yaml'),
        `kind: Resource
type: pdns.zones
name: ledger
spec:
  name: ledger.example.
  kind: Native
  nameservers: [ns1.ledger.example.]
---
kind: Resource
type: pdns.rrsets
name: www
spec:
  zone_id: \${pdns.zones/ledger.id}
  name: www.ledger.example.
  type: A
  ttl: 300
  records:
    - content: 192.0.2.30
    - content: 192.0.2.10
    - content: 192.0.2.20
`,
      );
    });
    afterAll(async () => {
      await pdns?.stop();
      intent?.cleanup();
    });

    it('an rrset whose records come back in another order produces no ledger entry', async () => {
      const first = await tend(['apply', intent.dir, '--yes']);
      expect(first.code, first.stdout + first.stderr).toBe(0);
      const created = await history();
      expect(created.map((c) => c.action)).toEqual(['create', 'create']);

      // What Tend remembers holds the records in the order it sent them (as when the platform's answer,
      // not a read, was remembered); PowerDNS lists them sorted.
      const db = new Database(join(intent.dir, '.tend', 'tend.db'));
      const row = db
        .prepare('SELECT fields FROM twin WHERE address = ?')
        .get('pdns.rrsets/www') as {
        fields: string;
      };
      const fields = JSON.parse(row.fields) as { records: { content: string }[] };
      expect(fields.records.map((r) => r.content)).toEqual([
        '192.0.2.10',
        '192.0.2.20',
        '192.0.2.30',
      ]);
      fields.records.reverse();
      db.prepare('UPDATE twin SET fields = ? WHERE address = ?').run(
        JSON.stringify(fields),
        'pdns.rrsets/www',
      );
      db.close();

      // Another actor rewrites the rrset with the same records in yet another order.
      const r = await pdns.api('PATCH', rrset, {
        rrsets: [
          {
            name: 'www.ledger.example.',
            type: 'A',
            ttl: 300,
            changetype: 'REPLACE',
            records: ['192.0.2.20', '192.0.2.30', '192.0.2.10'].map((content) => ({
              content,
              disabled: false,
            })),
          },
        ],
      });
      expect(r.status).toBe(204);
      for (let i = 0; i < 2; i++) {
        const again = await tend(['apply', intent.dir, '--yes']);
        expect(again.code, again.stdout + again.stderr).toBe(0);
        expect(again.stdout).toMatch(/No changes/);
      }
      expect(await history()).toEqual(created);
    });

    it(
      'a deletion by another actor produces one ledger entry, and the rrset is created again',
      { timeout: 60_000 },
      async () => {
        // Past the window in which an object Tend just created may still be invisible (10 s): a
        // missing object is then gone, not late.
        await new Promise((r) => setTimeout(r, 11_000));
        const before = await history();
        const r = await pdns.api('PATCH', rrset, {
          rrsets: [{ name: 'www.ledger.example.', type: 'A', changetype: 'DELETE' }],
        });
        expect(r.status).toBe(204);
        const applied = await tend(['apply', intent.dir, '--yes']);
        expect(applied.code, applied.stdout + applied.stderr).toBe(0);
        const after = (await history()).slice(before.length);
        const deletes = after.filter((c) => c.action === 'delete');
        expect(deletes).toHaveLength(1);
        expect(deletes[0]).toMatchObject({
          actor: 'unknown',
          source: 'unknown',
          address: 'pdns.rrsets/www',
          decision: { decision: 'enforce', rule: 'declared' },
        });
        expect(after.filter((c) => c.action === 'create' && c.actor === 'tend')).toHaveLength(1);
        const zone = await pdns.api('GET', rrset);
        const www = (
          zone.body as { rrsets: { name: string; type: string; records: unknown[] }[] }
        ).rrsets.find((s) => s.name === 'www.ledger.example.' && s.type === 'A');
        expect(www?.records).toHaveLength(3);

        const quiet = await tend(['apply', intent.dir, '--yes']);
        expect(quiet.code).toBe(0);
        expect((await history()).filter((c) => c.action === 'delete')).toHaveLength(1);
      },
    );
  },
);
