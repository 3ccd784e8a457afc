import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExample, runCli } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';
import { startTlsServer, TestCa } from '../support/tls-certs.js';
import type { Pem, TlsServer } from '../support/tls-certs.js';

// A `tls` check through the built CLI: a sandbox resource whose check shakes hands with a TLS server
// on 127.0.0.1 presenting a certificate of a test CA (its PEM copied into the intent directory).
// Expiring within minDaysLeft, the check fails as a warning, stored and shown by `tend status`; once
// the server presents a renewed certificate, the next apply finds it passing.

interface StatusJson {
  resources: {
    address: string;
    state: string;
    message?: string;
    checks: {
      name: string;
      kind: string;
      ok: boolean;
      severity?: string;
      message: string;
      evidence?: string;
    }[];
  }[];
}

describe('tls check (CLI, real sandbox process, real TLS server)', () => {
  let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
  let ex: ReturnType<typeof copyExample>;
  let ca: TestCa;
  let server: TlsServer;
  let renewed: Pem;

  beforeAll(async () => {
    ca = new TestCa();
    const soon = ca.leaf('db.example', { days: 10 });
    renewed = ca.leaf('db.example', { days: 90 });
    server = await startTlsServer(soon);
    sandbox = await startSandboxProcess();
    ex = copyExample('quickstart', sandbox.url);
    copyFileSync(ca.certFile, join(ex.dir, 'ca.pem'));
    ex.write(
      'app.yaml',
      [
        'kind: Resource',
        'type: sb.buckets',
        'name: assets',
        'spec: { name: tend-tls-assets, versioning: true }',
        'checks:',
        '  - name: cert',
        '    tls:',
        '      host: 127.0.0.1',
        `      port: ${server.port}`,
        '      servername: db.example',
        '      ca: ca.pem',
        '      minDaysLeft: 30',
        '',
      ].join('\n'),
    );
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await sandbox?.stop();
    ex?.cleanup();
    ca?.cleanup();
  });

  const status = async () => {
    const r = await runCli(['status', ex.dir, '--json']);
    return { code: r.code, json: JSON.parse(r.stdout) as StatusJson, text: r.stdout + r.stderr };
  };

  it('stores a certificate expiring within minDaysLeft as a failed check of severity warning; the resource stays converged and apply exits 0', async () => {
    const apply = await runCli(['apply', ex.dir]);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(
      new RegExp(
        `! sb\\.buckets/assets {2}check cert warning: 127\\.0\\.0\\.1:${server.port}: certificate for db\\.example expires in`,
      ),
    );
    const { json } = await status();
    const assets = json.resources.find((x) => x.address === 'sb.buckets/assets')!;
    expect(assets.state).toBe('converged');
    expect(assets.checks).toHaveLength(1);
    expect(assets.checks[0]).toMatchObject({
      name: 'cert',
      kind: 'tls',
      ok: false,
      severity: 'warning',
    });
    expect(assets.checks[0]!.message).toMatch(
      new RegExp(
        `^127\\.0\\.0\\.1:${server.port}: certificate for db\\.example expires in (9|10) days \\(.+Z\\), fewer than minDaysLeft 30$`,
      ),
    );
    expect(assets.checks[0]!.evidence).toMatch(
      /^subject CN=db\.example; issuer CN=Tend Test CA; notAfter .+Z; (9|10) days left$/,
    );

    const text = await runCli(['status', ex.dir]);
    expect(text.stdout).toMatch(/sb\.buckets\/assets\s+converged\s+\S+\s+0\/1 \(1 warning\)/);

    // A warning in tend compliance (issue 28, "What it must show"): exit 1, result warn.
    const report = await runCli(['compliance', ex.dir, '--json']);
    expect(report.code, report.stderr).toBe(1);
    const doc = JSON.parse(report.stdout) as {
      summary: { warn: number; fail: number };
      results: { policy: string; result: string; resources: { name: string }[] }[];
    };
    expect(doc.summary).toMatchObject({ warn: 1, fail: 0 });
    expect(doc.results).toEqual([
      expect.objectContaining({
        policy: 'check:cert',
        result: 'warn',
        resources: [expect.objectContaining({ name: 'sb.buckets/assets' })],
      }),
    ]);
  });

  it('passes on the next apply once the server presents a renewed certificate', async () => {
    await server.restart(renewed);
    const apply = await runCli(['apply', ex.dir]);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    const { json } = await status();
    const assets = json.resources.find((x) => x.address === 'sb.buckets/assets')!;
    expect(assets.state).toBe('converged');
    expect(assets.checks[0]).toMatchObject({ name: 'cert', kind: 'tls', ok: true });
    expect(assets.checks[0]!.severity).toBeUndefined();
    expect(assets.checks[0]!.message).toMatch(
      /certificate for db\.example is valid for (89|90) days more/,
    );
    const report = await runCli(['compliance', ex.dir, '--json']);
    expect(report.code, report.stdout + report.stderr).toBe(0);
    expect((JSON.parse(report.stdout) as { results: unknown[] }).results).toEqual([]);
  });
});
