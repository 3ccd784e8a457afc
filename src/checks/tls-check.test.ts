import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  refusedPort,
  startSilentServer,
  startTlsServer,
  TestCa,
} from '../../test/support/tls-certs.js';
import type { Pem, TlsServer } from '../../test/support/tls-certs.js';
import type { CheckResult, TlsCheckDecl } from '../core/index.js';
import type { CheckContext } from './index.js';
import { runCheck } from './index.js';

// The `tls` check against real TLS servers on 127.0.0.1 presenting certificates the real openssl
// made: a test CA's leaves for db.example (90 days, 10 days, expired) and a self-signed one. The
// clock is fixed a minute after the certificates were made (days left are counted by it).

const DAY = 86_400_000;
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/.source;

let ca: TestCa;
let now: Date;
const servers: Record<string, TlsServer> = {};
let silent: Awaited<ReturnType<typeof startSilentServer>>;

function context(at: Date = now, values: Record<string, string> = {}): CheckContext {
  return {
    observed: {},
    desired: {},
    resolve: (text) => {
      let missing = false;
      const out = text.replace(/\$\{([^}]*)\}/g, (_, ref: string) => {
        const v = values[ref];
        if (v === undefined) missing = true;
        return v ?? '';
      });
      return missing ? undefined : out;
    },
    now: () => at,
  };
}

function decl(over: Partial<TlsCheckDecl> & { port: number }): TlsCheckDecl {
  return {
    kind: 'tls',
    name: 'cert',
    host: '127.0.0.1',
    servername: 'db.example',
    ca: ca.certFile,
    minDaysLeft: 14,
    timeoutMs: 5000,
    source: { file: 'main.yaml', line: 1, column: 1 },
    ...over,
  };
}

beforeAll(async () => {
  ca = new TestCa();
  const pems: Record<string, Pem> = {
    days90: ca.leaf('db.example', { days: 90 }),
    days10: ca.leaf('db.example', { days: 10 }),
    expired: ca.leaf('db.example', { start: '20200101000000Z', end: '20200201000000Z' }),
    self: ca.selfSigned('db.example', 90),
  };
  // A minute after the certificates were made: 10 days from then is 9 whole days from now.
  now = new Date(Date.now() + 60_000);
  for (const [k, pem] of Object.entries(pems)) servers[k] = await startTlsServer(pem);
  silent = await startSilentServer();
}, 30_000);

afterAll(async () => {
  for (const s of Object.values(servers)) await s.stop();
  await silent?.stop();
  ca?.cleanup();
});

const port = (k: string) => servers[k]!.port;

describe('tls check', () => {
  it('passes with 90 days left and minDaysLeft 30, with the certificate as evidence', async () => {
    const r = await runCheck(decl({ port: port('days90'), minDaysLeft: 30 }), context());
    expect(r).toMatchObject({ name: 'cert', kind: 'tls', ok: true, at: now.toISOString() });
    expect(r.severity).toBeUndefined();
    expect(r.message).toMatch(
      new RegExp(
        `^127\\.0\\.0\\.1:${port('days90')}: certificate for db\\.example is valid for 89 days more \\(until ${ISO}\\)$`,
      ),
    );
    expect(r.evidence).toMatch(
      new RegExp(
        `^subject CN=db\\.example; issuer CN=Tend Test CA; notAfter ${ISO}; 89 days left$`,
      ),
    );
  });

  it('warns (not ok, severity warning) with 10 days left and minDaysLeft 30', async () => {
    const r = await runCheck(decl({ port: port('days10'), minDaysLeft: 30 }), context());
    expect(r.ok).toBe(false);
    expect(r.severity).toBe('warning');
    expect(r.message).toMatch(
      new RegExp(
        `^127\\.0\\.0\\.1:${port('days10')}: certificate for db\\.example expires in 9 days \\(${ISO}\\), fewer than minDaysLeft 30$`,
      ),
    );
    expect(r.evidence).toContain('; 9 days left');
  });

  it('passes with 10 days left and minDaysLeft 5', async () => {
    const r = await runCheck(decl({ port: port('days10'), minDaysLeft: 5 }), context());
    expect(r.ok, r.message).toBe(true);
  });

  it('counts days left by the context clock: 90 days judged 80 days on warns', async () => {
    const later = new Date(now.getTime() + 80 * DAY);
    const r = await runCheck(decl({ port: port('days90'), minDaysLeft: 30 }), context(later));
    expect(r).toMatchObject({ ok: false, severity: 'warning' });
    expect(r.message).toContain('expires in 9 days');
  });

  it('fails as an error once the context clock is past notAfter, whatever node thinks', async () => {
    const later = new Date(now.getTime() + 11 * DAY);
    const r = await runCheck(decl({ port: port('days10'), minDaysLeft: 0 }), context(later));
    expect(r).toMatchObject({ ok: false });
    expect(r.severity).toBeUndefined();
    expect(r.message).toMatch(
      new RegExp(
        `^127\\.0\\.0\\.1:${port('days10')}: certificate has expired \\(notAfter ${ISO}\\)$`,
      ),
    );
    expect(r.evidence).toMatch(/; expired 1 day ago$/);
  });

  it('fails as an error (no severity: warning) on an expired certificate', async () => {
    const r = await runCheck(decl({ port: port('expired'), minDaysLeft: 0 }), context());
    expect(r.ok).toBe(false);
    expect(r.severity).toBeUndefined();
    expect(r.message).toBe(
      `127.0.0.1:${port('expired')}: certificate has expired (notAfter 2020-02-01T00:00:00.000Z)`,
    );
    expect(r.evidence).toMatch(/notAfter 2020-02-01T00:00:00\.000Z; expired \d+ days ago$/);
  });

  it('fails when the chain does not reach a trusted CA: the roots Node trusts, without ca', async () => {
    const { ca: _, ...noCa } = decl({ port: port('days90') });
    const r = await runCheck(noCa, context());
    expect(r.ok).toBe(false);
    expect(r.severity).toBeUndefined();
    expect(r.message).toBe(
      `127.0.0.1:${port('days90')}: unable to verify the first certificate (not signed by a root CA Node trusts; pass ca: the PEM file of the CA that signed it)`,
    );
    expect(r.evidence).toContain('issuer CN=Tend Test CA');
  });

  it('fails on a self-signed certificate, with or without ca', async () => {
    const { ca: _, ...noCa } = decl({ port: port('self') });
    const without = await runCheck(noCa, context());
    expect(without.message).toBe(
      `127.0.0.1:${port('self')}: self-signed certificate (not signed by a root CA Node trusts; pass ca: the PEM file of the CA that signed it)`,
    );
    const other = await runCheck(decl({ port: port('self') }), context());
    expect(other.ok).toBe(false);
    expect(other.message).toBe(
      `127.0.0.1:${port('self')}: self-signed certificate (not signed by the CA in ${ca.certFile})`,
    );
  });

  it('fails when the certificate does not match the name (servername, else host)', async () => {
    const r = await runCheck(
      decl({ port: port('days90'), servername: 'other.example' }),
      context(),
    );
    expect(r.ok).toBe(false);
    expect(r.severity).toBeUndefined();
    expect(r.message).toBe(
      `127.0.0.1:${port('days90')}: certificate for other.example does not match: Hostname/IP does not match certificate's altnames: Host: other.example. is not in the cert's altnames: DNS:db.example`,
    );
    const { servername: _, ...byHost } = decl({ port: port('days90') });
    const ip = await runCheck(byHost, context());
    expect(ip.message).toBe(
      `127.0.0.1:${port('days90')}: certificate for 127.0.0.1 does not match: Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list: `,
    );
  });

  it('fails with "connection refused" where nothing listens', async () => {
    const p = await refusedPort();
    const r = await runCheck(decl({ port: p }), context());
    expect(r).toMatchObject({ ok: false, message: `127.0.0.1:${p}: connection refused` });
    expect(r.severity).toBeUndefined();
    expect(r.evidence).toBeUndefined();
  });

  it('times out on a server that accepts the connection and never answers', async () => {
    const r = await runCheck(decl({ port: silent.port, timeoutMs: 300 }), context());
    expect(r).toMatchObject({
      ok: false,
      message: `127.0.0.1:${silent.port}: timed out after 300 ms`,
    });
  });

  it('stops when the context aborts it', async () => {
    const controller = new AbortController();
    const running = runCheck(decl({ port: silent.port }), {
      ...context(),
      signal: controller.signal,
    });
    controller.abort();
    expect((await running).message).toBe(`127.0.0.1:${silent.port}: check aborted`);
  });

  it('fills in references in host and servername, and waits while one cannot be resolved', async () => {
    const refs = decl({ port: port('days90'), host: '${h}', servername: '${n}' });
    const ok = await runCheck(refs, context(now, { h: '127.0.0.1', n: 'db.example' }));
    expect(ok.ok, ok.message).toBe(true);
    const waiting: CheckResult = await runCheck(refs, context(now, { h: '127.0.0.1' }));
    expect(waiting).toMatchObject({
      ok: false,
      message: `references in the check cannot be resolved yet (127.0.0.1:${port('days90')})`,
    });
  });

  it('fails when the ca file cannot be read any more', async () => {
    const r = await runCheck(decl({ port: port('days90'), ca: `${ca.dir}/gone.pem` }), context());
    expect(r.message).toBe(
      `127.0.0.1:${port('days90')}: cannot read the ca file ${ca.dir}/gone.pem (ENOENT)`,
    );
  });
});
