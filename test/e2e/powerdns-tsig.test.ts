import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../support/cli.js';
import { PDNS, startPdns, type PdnsHandle } from '../support/pdns.js';
import { pdnsIntent, type PdnsIntent } from '../support/pdns-intent.js';

// TSIG keys, zone metadata and cryptokeys managed end to end through the CLI against a real
// pdns_server, from PowerDNS's own document plus examples/powerdns/specs/pdns.overlay.yaml: applied
// from empty, a second plan empty, changes made behind Tend's back (the raw API and pdnsutil) seen
// and put back, removal from the intent deletes. Secrets — the TSIG key material Tend sends and the
// private key PowerDNS hands out with every cryptokey read — never reach Tend's store, its ledger or
// its output. The steps build on each other (one server, one intent directory), in order.

interface TsigKey {
  name: string;
  algorithm: string;
  key: string;
}
interface Cryptokey {
  id: number;
  active: boolean;
  algorithm: string;
}

const ZONE = `kind: Resource
type: pdns.zones
name: keys
spec:
  name: keys.example.
  kind: Native
  nameservers: [ns1.keys.example.]
lifecycle: { stateful: true }
`;
const MANAGED = `kind: Resource
type: pdns.tsigkeys
name: xfr
spec:
  name: xfr-key
  algorithm: HMAC-SHA256
  key: { fromEnv: XFR_TSIG_SECRET }
---
kind: Resource
type: pdns.metadata
name: axfr-from
spec:
  zone_id: \${pdns.zones/keys.id}
  kind: allow-axfr-from
  metadata: [198.51.100.0/24, 192.0.2.0/24]
---
kind: Resource
type: pdns.metadata
name: also-notify
spec:
  zone_id: \${pdns.zones/keys.id}
  kind: ALSO-NOTIFY
  metadata: ['192.0.2.53:5300']
---
kind: Resource
type: pdns.cryptokeys
name: csk
spec:
  zone_id: \${pdns.zones/keys.id}
  keytype: csk
  algorithm: ecdsap256sha256
  active: true
`;

describe.skipIf(PDNS.skip)(
  `PowerDNS TSIG keys, metadata and cryptokeys end to end${PDNS.note}`,
  () => {
    let pdns: PdnsHandle;
    let intent: PdnsIntent;
    /** The TSIG secret Tend sends (base64 of 32 random bytes), from the environment. */
    const secret = randomBytes(32).toString('base64');
    /** Everything every tend run printed, searched for secrets at the end. */
    const printed: string[] = [];
    const file = () => join(intent.dir, 'keys.yaml');

    async function tend(args: string[]): Promise<CliResult> {
      const r = await runCli(args, { env: { ...intent.env, XFR_TSIG_SECRET: secret } });
      printed.push(r.stdout, r.stderr);
      return r;
    }
    async function api<T>(path: string): Promise<T> {
      const r = await pdns.api('GET', `/servers/localhost${path}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body as T;
    }
    async function planIsEmpty(count: number): Promise<void> {
      const plan = await tend(['plan', intent.dir]);
      expect(plan.code, plan.stdout + plan.stderr).toBe(0);
      expect(plan.stdout).toMatch(new RegExp(`No changes\\. ${count} resources? match`));
    }
    /** Every file under a directory, recursively. */
    function files(dir: string): string[] {
      return readdirSync(dir).flatMap((f) => {
        const p = join(dir, f);
        return statSync(p).isDirectory() ? files(p) : [p];
      });
    }

    beforeAll(async () => {
      pdns = await startPdns();
      intent = pdnsIntent(pdns, { onlyProvider: true });
    });
    afterAll(async () => {
      await pdns?.stop();
      intent?.cleanup();
    });

    it('applies a TSIG key with its secret, two metadata kinds and a CSK from empty', async () => {
      writeFileSync(file(), `${ZONE}---\n${MANAGED}`);
      const apply = await tend(['apply', intent.dir]);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      expect(apply.stdout).toContain('5 converged');

      // The key PowerDNS holds is the one Tend sent (a single-key GET returns the secret).
      const key = await api<TsigKey>('/tsigkeys/xfr-key.');
      expect(key).toMatchObject({ name: 'xfr-key', algorithm: 'hmac-sha256', key: secret });
      expect(await api('/zones/keys.example./metadata/ALLOW-AXFR-FROM')).toMatchObject({
        metadata: expect.arrayContaining(['198.51.100.0/24', '192.0.2.0/24']),
      });
      expect(await api('/zones/keys.example./metadata/ALSO-NOTIFY')).toMatchObject({
        metadata: ['192.0.2.53:5300'],
      });
      expect(await api<Cryptokey[]>('/zones/keys.example./cryptokeys')).toEqual([
        expect.objectContaining({ active: true, algorithm: 'ECDSAP256SHA256', keytype: 'csk' }),
      ]);
    });

    it('plans nothing afterwards (case, order and spelling as PowerDNS stores them)', async () => {
      await planIsEmpty(5);
    });

    it('changes made behind its back are seen and put back', async () => {
      // A key's algorithm cannot change in place (a PUT adds a second key of the name): someone
      // replaces the key with one of another algorithm and another secret.
      expect((await pdns.api('DELETE', '/servers/localhost/tsigkeys/xfr-key.')).status).toBe(204);
      const other = await pdns.api('POST', '/servers/localhost/tsigkeys', {
        name: 'xfr-key',
        algorithm: 'hmac-sha512',
      });
      expect(other.status, JSON.stringify(other.body)).toBe(201);
      const meta = await pdns.pdnsutil([
        'set-meta',
        'keys.example',
        'ALLOW-AXFR-FROM',
        '203.0.113.0/24',
      ]);
      expect(meta.code, meta.stderr).toBe(0);
      const [ck] = await api<Cryptokey[]>('/zones/keys.example./cryptokeys');
      const off = await pdns.pdnsutil(['deactivate-zone-key', 'keys.example', String(ck!.id)]);
      expect(off.code, off.stderr).toBe(0);

      const plan = await tend(['plan', intent.dir]);
      expect(plan.code, plan.stdout + plan.stderr).toBe(2);
      // A new algorithm is a new key (x-tend-immutable in the overlay): a replace under the same
      // name, which must delete before it creates — gated.
      expect(plan.stdout).toMatch(/-\/\+ pdns\.tsigkeys\/xfr\b/);
      expect(plan.stdout).toContain(
        'algorithm: "hmac-sha512" → "HMAC-SHA256"   # forces replacement',
      );
      expect(plan.stdout).toMatch(/~ pdns\.metadata\/axfr-from\b/);
      expect(plan.stdout).toMatch(/~ pdns\.cryptokeys\/csk\b/);

      const apply = await tend(['apply', intent.dir, '--yes', '--approve-destroy']);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      // The key is the declared one again: its algorithm, and the secret from the environment.
      expect(await api<TsigKey[]>('/tsigkeys')).toHaveLength(1);
      expect(await api<TsigKey>('/tsigkeys/xfr-key.')).toMatchObject({
        algorithm: 'hmac-sha256',
        key: secret,
      });
      expect(
        (await api<{ metadata: string[] }>('/zones/keys.example./metadata/ALLOW-AXFR-FROM'))
          .metadata,
      ).toEqual(expect.arrayContaining(['198.51.100.0/24', '192.0.2.0/24']));
      expect(await api<Cryptokey[]>('/zones/keys.example./cryptokeys')).toEqual([
        expect.objectContaining({ id: ck!.id, active: true }),
      ]);
      await planIsEmpty(5);
    });

    it('removal from the intent deletes the key, the metadata and the cryptokey; the zone stays', async () => {
      writeFileSync(file(), ZONE);
      const plan = await tend(['plan', intent.dir]);
      expect(plan.code, plan.stdout + plan.stderr).toBe(2);
      for (const a of [
        'tsigkeys/xfr',
        'metadata/axfr-from',
        'metadata/also-notify',
        'cryptokeys/csk',
      ]) {
        expect(plan.stdout).toMatch(new RegExp(`- pdns\\.${a.replace('/', '\\/')}\\b`));
      }
      const apply = await tend(['apply', intent.dir, '--yes']);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      expect(await api<TsigKey[]>('/tsigkeys')).toEqual([]);
      expect(await api('/zones/keys.example./metadata/ALLOW-AXFR-FROM')).toMatchObject({
        metadata: [],
      });
      expect(await api('/zones/keys.example./metadata/ALSO-NOTIFY')).toMatchObject({
        metadata: [],
      });
      expect(await api<Cryptokey[]>('/zones/keys.example./cryptokeys')).toEqual([]);
      expect((await pdns.api('GET', '/servers/localhost/zones/keys.example.')).status).toBe(200);
      await planIsEmpty(1);
    });

    it('no secret is in the store, the ledger or any output', async () => {
      // The ledger as tend shows it, and every byte under .tend/.
      const history = await tend(['history', intent.dir, '--json', '--limit', '1000']);
      expect(history.code, history.stderr).toBe(0);
      expect(history.stdout).toContain('pdns.tsigkeys/xfr');
      const stored = files(join(intent.dir, '.tend')).map(
        (f) => [f, readFileSync(f).toString('latin1')] as const,
      );
      expect(stored.length).toBeGreaterThan(0);
      for (const [f, bytes] of stored) {
        expect(bytes, f).not.toContain(secret);
        expect(bytes, f).not.toContain('Private-key-format');
        expect(bytes, f).not.toContain('PrivateKey:');
      }
      for (const text of printed) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain('Private-key-format');
      }
    });
  },
);
