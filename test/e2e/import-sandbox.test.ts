import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startSandboxProcess, type SandboxHandle } from '../support/sandbox-process.js';

// `tend import` against a real sandbox process: objects made by hand through the platform's API
// (no Tend marker) become intent that plans empty, and Tend adopts them.

async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Tend-Actor': 'alice' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

function provider(url: string): string {
  return `kind: Provider\nname: sb\ntype: openapi\nspec: ${url}/openapi.json\nendpoint: ${url}\n`;
}

describe('tend import (CLI, real sandbox process)', () => {
  let sandbox: SandboxHandle;
  const dirs: string[] = [];
  const ids: Record<string, string> = {};

  function intentDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'tend-import-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'provider.yaml'), provider(sandbox.url));
    return dir;
  }

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    const net = await post(`${sandbox.url}/networks`, {
      name: 'Main Net',
      cidr: '10.0.0.0/16',
      tags: { team: 'platform' },
    });
    ids['net'] = net['id'] as string;
    const twin = await post(`${sandbox.url}/networks`, { name: 'main net', cidr: '10.1.0.0/16' });
    ids['net2'] = twin['id'] as string;
    const web = await post(`${sandbox.url}/instances`, {
      name: 'web',
      network_id: ids['net'],
      image: 'debian-12',
      size: 'medium',
      admin_password: 'hunter2-import',
    });
    ids['web'] = web['id'] as string;
    await post(`${sandbox.url}/volumes`, { name: 'data', instance_id: ids['web'], size: 20 });
    await post(`${sandbox.url}/services`, {
      name: 'api',
      image: 'nginx:1.27',
      replicas: 3,
      network_id: ids['net'],
    });
    await post(`${sandbox.url}/buckets`, { name: 'assets-1', versioning: true });
  });
  afterAll(async () => {
    await sandbox?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('writes intent for every object, with references and names from natural keys; plan is then empty', async () => {
    const dir = intentDir();
    const imported = await runCli(['import', dir, '--provider', 'sb']);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('imported 6 objects of sb into');
    const text = readFileSync(join(dir, 'sb-import.yaml'), 'utf8');
    const docs = parseAllDocuments(text).map((d) => d.toJS() as Record<string, unknown>);
    const byAddress = new Map(docs.map((d) => [`${String(d['type'])}/${String(d['name'])}`, d]));
    expect([...byAddress.keys()].sort()).toEqual([
      'sb.buckets/assets-1',
      'sb.instances/web',
      'sb.networks/main_net',
      `sb.networks/${ids['net2']}`,
      'sb.services/api',
      'sb.volumes/data',
    ]);
    // Declared fields only: no id, status, created_at or private_ip; no secret.
    expect(byAddress.get('sb.instances/web')!['spec']).toEqual({
      name: 'web',
      network_id: '${sb.networks/main_net.id}',
      size: 'medium',
      image: 'debian-12',
    });
    expect(byAddress.get('sb.volumes/data')!['spec']).toEqual({
      name: 'data',
      instance_id: '${sb.instances/web.id}',
      size: 20,
    });
    expect(byAddress.get('sb.networks/main_net')!['spec']).toEqual({
      name: 'Main Net',
      cidr: '10.0.0.0/16',
      tags: { team: 'platform' },
    });
    expect(text).not.toContain('hunter2');
    expect(text).toMatch(/^# Imported by `tend import --provider sb`/);

    const plan = await runCli(['plan', dir]);
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect(plan.stdout).toContain('No changes. 6 resources match the intent.');
  });

  it('imports nothing twice: a second import finds everything declared', async () => {
    const dir = intentDir();
    expect((await runCli(['import', dir, '--provider', 'sb'])).code).toBe(0);
    const again = await runCli([
      'import',
      dir,
      '--provider',
      'sb',
      '--out',
      join(dir, 'more.yaml'),
    ]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('nothing to import from sb: 6 already declared');
    expect(existsSync(join(dir, 'more.yaml'))).toBe(false);
  });

  it('imports only the given types; references to types not imported stay ids', async () => {
    const dir = intentDir();
    const r = await runCli(['import', dir, '--provider', 'sb', '--type', 'instances', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { imported: { address: string; objectId: string }[] };
    expect(result.imported).toEqual([
      { address: 'sb.instances/web', objectId: ids['web'], dependsOn: [] },
    ]);
    expect(readFileSync(join(dir, 'sb-import.yaml'), 'utf8')).toContain(
      `network_id: ${ids['net']}`,
    );
    expect((await runCli(['plan', dir])).code).toBe(0);
  });

  it('adopts: the first apply changes nothing; a later change adds the marker', async () => {
    const dir = intentDir();
    expect((await runCli(['import', dir, '--provider', 'sb', '--type', 'sb.services'])).code).toBe(
      0,
    );
    const apply = await runCli(['apply', dir]);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    const before = (await sandbox.objects()).find((o) => o.type === 'services')!;
    expect(before.fields['tags'] ?? {}).not.toHaveProperty('tend.address');
    const file = join(dir, 'sb-import.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('replicas: 3', 'replicas: 2'));
    expect((await runCli(['apply', dir])).code).toBe(0);
    const after = (await sandbox.objects()).find((o) => o.type === 'services')!;
    expect(after.fields['replicas']).toBe(2);
    expect(after.fields['tags']).toMatchObject({ 'tend.address': 'sb.services/api' });
  });

  const bad: { name: string; args: (dir: string) => string[]; message: string }[] = [
    {
      name: 'an unknown provider',
      args: (dir) => ['import', dir, '--provider', 'aws'],
      message: 'no provider named aws in',
    },
    {
      name: 'an unknown type',
      args: (dir) => ['import', dir, '--provider', 'sb', '--type', 'disks'],
      message:
        'provider sb has no resource type disks; its types: networks, instances, volumes, buckets, services',
    },
    {
      name: 'a file that exists',
      args: (dir) => ['import', dir, '--provider', 'sb', '--out', join(dir, 'provider.yaml')],
      message: 'provider.yaml already exists; import never overwrites',
    },
    {
      name: 'no --provider',
      args: (dir) => ['import', dir],
      message: "required option '--provider <name>' not specified",
    },
  ];
  it.each(bad)('refuses $name (exit 1, no intent written)', async (c) => {
    const dir = intentDir();
    const r = await runCli(c.args(dir));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(c.message);
    expect(existsSync(join(dir, 'sb-import.yaml'))).toBe(false);
  });

  it('refuses a directory whose intent does not validate', async () => {
    const dir = intentDir();
    writeFileSync(join(dir, 'bad.yaml'), 'kind: Resource\ntype: sb.nope\nname: x\nspec: {}\n');
    const r = await runCli(['import', dir, '--provider', 'sb']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error[type.unknown]');
    expect(r.stderr).toContain('fix the intent directory first');
    expect(existsSync(join(dir, 'sb-import.yaml'))).toBe(false);
  });
});
