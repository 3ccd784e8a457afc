import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WriteContext } from '../../core/index.js';
import { TendError } from '../../core/index.js';
import type { PdnsHandle } from '../../../test/support/pdns.js';
import { PDNS, startPdns } from '../../../test/support/pdns.js';
import type { OpenApiProvider } from './openapi-provider.js';
import { loadOpenApiProvider } from './openapi-provider.js';

// Integration: the generic provider against a real pdns_server, knowing nothing of PowerDNS but its
// official (unmodified) Swagger 2.0 document and the overlay shipped in examples/powerdns.

const SPEC = 'examples/powerdns/specs/powerdns-auth-4.7.3.swagger.yaml';
const OVERLAY = 'examples/powerdns/specs/pdns.overlay.yaml';
const ctx: WriteContext = { actor: { actor: 'tend', motivation: 'test' } };

let pdns: PdnsHandle;
let provider: OpenApiProvider;

async function failure(p: Promise<unknown>): Promise<TendError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(TendError);
    return e as TendError;
  }
  throw new Error('expected a failure');
}

describe.skipIf(PDNS.skip)(`openapi provider on a real PowerDNS ${PDNS.reason}`, () => {
  beforeAll(async () => {
    pdns = await startPdns();
    provider = await loadOpenApiProvider({
      name: 'pdns',
      spec: SPEC,
      overlay: OVERLAY,
      endpoint: pdns.apiUrl,
      workspace: 'ws',
      auth: { header: 'X-API-Key', value: pdns.apiKey },
    });
  }, 30_000);
  afterAll(async () => {
    await pdns?.stop();
  });

  it('serves the same document the example ships', async () => {
    const r = await fetch(`${pdns.webUrl}/api/docs`, { headers: { 'X-API-Key': pdns.apiKey } });
    expect(await r.text()).toBe(readFileSync(SPEC, 'utf8'));
  });

  it('creates a zone from a non-canonical name and finds it by its canonical one', async () => {
    const zone = await provider.create(
      'zones',
      { name: 'Example.ORG', kind: 'Native', nameservers: ['NS1.example.org'] },
      ctx,
    );
    expect(zone.id).toBe('example.org.');
    expect(zone.fields).toMatchObject({ name: 'example.org.', kind: 'Native' });
    // The embedded rrsets are the rrsets type's objects, not the zone's fields.
    expect(zone.fields).not.toHaveProperty('rrsets');
    const listed = await provider.list('zones');
    expect(listed.map((z) => z.id)).toEqual(['example.org.']);
    const e = await failure(
      provider.create('zones', { name: 'example.org.', kind: 'Native' }, ctx),
    );
    expect(e.code).toBe('platform.refused');
    expect(e.message).toMatch(/409/);
  });

  it('plans nothing for a declared zone as written, and a replace for a rename', async () => {
    const zone = (await provider.read('zones', 'example.org.'))!;
    const declared = { name: 'example.org', kind: 'Native', nameservers: ['ns9.example.org.'] };
    // The name is compared canonically; nameservers are write-only (never returned).
    expect(await provider.evaluate('zones', zone, declared)).toMatchObject({ action: 'none' });
    expect(await provider.evaluate('zones', zone, { name: 'example.net.' })).toEqual({
      action: 'replace',
      fields: ['name'],
      source: 'annotation',
      reason: 'name is create-only (annotated in the OpenAPI document)',
    });
  });

  it('changes a zone in place with PUT', async () => {
    const zone = (await provider.read('zones', 'example.org.'))!;
    const updated = await provider.update('zones', zone.id, { kind: 'Master' }, zone, ctx);
    expect(updated.fields['kind']).toBe('Master');
  });

  it('manages an rrset through the zone PATCH: create, read, update, delete', async () => {
    const created = await provider.create(
      'rrsets',
      {
        zone_id: 'example.org.',
        name: 'WWW.example.org',
        type: 'a',
        ttl: 300,
        records: [{ content: '192.0.2.2' }, { content: '192.0.2.1' }],
      },
      ctx,
    );
    expect(created.id).toBe('example.org./www.example.org./A');
    expect(created.fields).toMatchObject({
      zone_id: 'example.org.',
      name: 'www.example.org.',
      type: 'A',
      ttl: 300,
    });
    const all = await provider.list('rrsets');
    expect(all.map((o) => o.id).sort()).toEqual([
      'example.org./example.org./NS',
      'example.org./example.org./SOA',
      'example.org./www.example.org./A',
    ]);
    // Declared records in another order, without disabled, are the same set.
    const noChange = {
      zone_id: 'example.org.',
      name: 'www.example.org',
      type: 'A',
      ttl: 300,
      records: [{ content: '192.0.2.1' }, { content: '192.0.2.2' }],
    };
    expect(await provider.evaluate('rrsets', created, noChange)).toMatchObject({ action: 'none' });

    // The engine sends only the changed fields; the provider completes the REPLACE.
    const updated = await provider.update(
      'rrsets',
      created.id,
      { records: [{ content: '192.0.2.3' }] },
      created,
      ctx,
    );
    expect(updated.fields['records']).toEqual([{ content: '192.0.2.3', disabled: false }]);
    expect(updated.fields['ttl']).toBe(300);

    await provider.delete('rrsets', created.id, ctx);
    expect(await provider.read('rrsets', created.id)).toBeUndefined();
    await provider.delete('rrsets', created.id, ctx); // deleting what is gone succeeds
  });

  it('sees an rrset changed out of band with pdnsutil', async () => {
    await provider.create(
      'rrsets',
      {
        zone_id: 'example.org.',
        name: 'mail.example.org.',
        type: 'A',
        ttl: 60,
        records: [{ content: '192.0.2.25' }],
      },
      ctx,
    );
    const r = await pdns.pdnsutil([
      'replace-rrset',
      'example.org',
      'mail',
      'A',
      '60',
      '192.0.2.99',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const seen = await provider.read('rrsets', 'example.org./mail.example.org./A');
    expect(seen?.fields['records']).toEqual([{ content: '192.0.2.99', disabled: false }]);
  });

  it('renames a TSIG key in place; its id follows the name and the secret never shows', async () => {
    const key = await provider.create(
      'tsigkeys',
      { name: 'XFR-Key.', algorithm: 'HMAC-SHA256' },
      ctx,
    );
    expect(key.id).toBe('xfr-key.');
    expect(key.fields).toMatchObject({ name: 'xfr-key', algorithm: 'hmac-sha256' });
    expect(key.fields).not.toHaveProperty('key');
    expect(await provider.evaluate('tsigkeys', key, { name: 'xfr-key2' })).toMatchObject({
      action: 'update',
    });
    const renamed = await provider.update('tsigkeys', key.id, { name: 'xfr-key2' }, key, ctx);
    expect(renamed.id).toBe('xfr-key2.');
    expect(await provider.read('tsigkeys', 'xfr-key.')).toBeUndefined();
    expect((await provider.read('tsigkeys', 'xfr-key2.'))?.fields['name']).toBe('xfr-key2');
    expect(JSON.stringify(await provider.list('tsigkeys'))).not.toMatch(/"key"/);
  });

  it('manages zone metadata by kind; a kind that is not set does not exist', async () => {
    expect(await provider.read('metadata', 'example.org./ALLOW-AXFR-FROM')).toBeUndefined();
    const m = await provider.create(
      'metadata',
      { zone_id: 'example.org.', kind: 'allow-axfr-from', metadata: ['192.0.2.0/24'] },
      ctx,
    );
    expect(m.id).toBe('example.org./ALLOW-AXFR-FROM');
    expect(m.fields).toMatchObject({ zone_id: 'example.org.', metadata: ['192.0.2.0/24'] });
    const u = await provider.update(
      'metadata',
      m.id,
      { metadata: ['198.51.100.0/24', '192.0.2.0/24'] },
      m,
      ctx,
    );
    expect(
      await provider.evaluate('metadata', u, { metadata: ['192.0.2.0/24', '198.51.100.0/24'] }),
    ).toMatchObject({ action: 'none' });
    await provider.delete('metadata', m.id, ctx);
    expect(await provider.read('metadata', m.id)).toBeUndefined();
  });

  it('manages a DNSSEC cryptokey by (zone, algorithm): create, read, update in place, replace on a new algorithm, delete; the private key never shows', async () => {
    expect(await provider.list('cryptokeys')).toEqual([]);
    const created = await provider.create(
      'cryptokeys',
      { zone_id: 'example.org.', keytype: 'csk', algorithm: 'ecdsap256sha256', active: true },
      ctx,
    );
    // The server numbers keys; the id is the zone's and the key's.
    expect(created.id).toMatch(/^example\.org\.\/\d+$/);
    expect(created.fields).toMatchObject({
      zone_id: 'example.org.',
      keytype: 'csk',
      algorithm: 'ECDSAP256SHA256',
      active: true,
      published: true,
    });
    // A CSK signs the zone: flags 257 (zone key + secure entry point), protocol 3, algorithm 13.
    expect(created.fields['dnskey']).toMatch(/^257 3 13 [A-Za-z0-9+/]+=*$/);
    expect((await provider.read('zones', 'example.org.'))?.fields['dnssec']).toBe(true);

    // PowerDNS returns the private key with one key (POST and GET); Tend never keeps it.
    const keyPath = `/servers/localhost/zones/example.org./cryptokeys/${created.id.split('/')[1]!}`;
    const raw = await pdns.api('GET', keyPath);
    expect(raw.body).toHaveProperty('privatekey', expect.stringContaining('Private-key-format'));
    const read = (await provider.read('cryptokeys', created.id))!;
    expect(read.fields).toEqual(created.fields);
    for (const seen of [created, read, ...(await provider.list('cryptokeys'))]) {
      expect(seen.fields).not.toHaveProperty('privatekey');
      expect(JSON.stringify(seen)).not.toMatch(/Private-key-format|PrivateKey/);
    }

    const declared = {
      zone_id: 'example.org.',
      keytype: 'csk',
      algorithm: 'ECDSAP256SHA256',
      active: true,
    };
    expect(await provider.evaluate('cryptokeys', read, declared)).toMatchObject({
      action: 'none',
    });
    expect(
      await provider.evaluate('cryptokeys', read, { ...declared, active: false }),
    ).toMatchObject({ action: 'update', fields: ['active'] });
    expect(
      await provider.evaluate('cryptokeys', read, { ...declared, algorithm: 'ED25519' }),
    ).toEqual({
      action: 'replace',
      fields: ['algorithm'],
      source: 'annotation',
      reason: 'algorithm is create-only (annotated in the OpenAPI document)',
    });

    // PUT (de)activates the key in place: same id, same key material.
    const updated = await provider.update('cryptokeys', read.id, { active: false }, read, ctx);
    expect(updated.id).toBe(read.id);
    expect(updated.fields).toMatchObject({ active: false, dnskey: read.fields['dnskey'] });
    const listed = await pdns.pdnsutil(['list-keys', 'example.org']);
    expect(listed.stdout).toMatch(/example\.org\s+CSK\s+Pub\s+256\s+ECDSAP256SHA256/);
    expect(
      await provider.evaluate('cryptokeys', updated, { ...declared, active: false }),
    ).toMatchObject({ action: 'none' });

    await provider.delete('cryptokeys', read.id, ctx);
    expect(await provider.read('cryptokeys', read.id)).toBeUndefined();
    expect(await provider.list('cryptokeys')).toEqual([]);
    await provider.delete('cryptokeys', read.id, ctx); // deleting what is gone succeeds
  });

  it('refuses a nested create without its parent, saying what to declare', async () => {
    const e = await failure(provider.create('rrsets', { name: 'x.example.org.', type: 'A' }, ctx));
    expect(e.code).toBe('provider.missing_parent');
    expect(e.message).toBe(
      'rrsets needs zone_id (the id of its zones object) to know where the object lives; declare it, usually as a reference',
    );
  });

  it('deletes a zone, and with it every rrset it held', async () => {
    await provider.delete('zones', 'example.org.', ctx);
    expect(await provider.list('zones')).toEqual([]);
    expect(await provider.list('rrsets')).toEqual([]);
    expect(await provider.read('rrsets', 'example.org./mail.example.org./A')).toBeUndefined();
    await provider.delete('rrsets', 'example.org./mail.example.org./A', ctx);
  });
});
