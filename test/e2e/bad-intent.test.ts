import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// Every bad-input case of `tend validate` / `tend apply`, against a real sandbox process: the error
// names file:line:column and the field, the exit code is 1, and not one request reaches the
// platform (the provider reads a copy of the sandbox's committed OpenAPI file, so even the document
// is local).

const SPEC = join(ROOT, 'src', 'sandbox', 'openapi.json');

const provider = (url: string) => `kind: Provider
name: sb
type: openapi
spec: ./openapi.json
endpoint: ${url}
`;

const net = `kind: Resource
type: sb.networks
name: main
spec:
  name: main
  cidr: 10.0.0.0/16
`;

interface Case {
  name: string;
  file: string;
  want: { code: string; line: number; column: number; message: string; path?: string }[];
}

const cases: Case[] = [
  {
    name: 'YAML syntax error',
    file: `${net}---\nkind: Resource\ntype: sb.networks\nname: [broken\n`,
    want: [{ code: 'yaml.syntax', line: 11, column: 1, message: 'YAML syntax error' }],
  },
  {
    name: 'unknown kind lists the known kinds',
    file: `${net}---\nkind: Resorce\nname: x\n`,
    want: [
      {
        code: 'kind.unknown',
        line: 8,
        column: 7,
        message: 'unknown kind `Resorce`; known kinds: Provider, Resource',
        path: 'kind',
      },
    ],
  },
  {
    name: 'unknown resource type lists the provider types',
    file: `${net}---\nkind: Resource\ntype: sb.network\nname: x\nspec: {}\n`,
    want: [{ code: 'type.unknown', line: 9, column: 7, message: 'networks', path: 'type' }],
  },
  {
    name: 'a field the schema does not allow',
    file: net.replace('  cidr: 10.0.0.0/16\n', '  cidr: 10.0.0.0/16\n  colour: blue\n'),
    want: [
      {
        code: 'schema.unknown_field',
        line: 7,
        column: 3,
        message: 'unknown field `colour` in spec; allowed fields: cidr, name, tags',
        path: 'spec.colour',
      },
    ],
  },
  {
    name: 'a wrong type',
    file: `${net}---\nkind: Resource\ntype: sb.services\nname: api\nspec:\n  name: api\n  image: nginx\n  replicas: many\n`,
    want: [
      { code: 'schema.type', line: 14, column: 13, message: 'integer', path: 'spec.replicas' },
    ],
  },
  {
    name: 'a wrong enum value lists the allowed ones',
    file: `${net}---\nkind: Resource\ntype: sb.instances\nname: web\nspec:\n  name: web\n  network_id: \${sb.networks/main.id}\n  image: debian\n  size: huge\n`,
    want: [{ code: 'schema.enum', line: 15, column: 9, message: 'small', path: 'spec.size' }],
  },
  {
    name: 'a missing required field',
    file: `kind: Resource\ntype: sb.networks\nname: main\nspec:\n  name: main\n`,
    want: [
      {
        code: 'schema.required',
        line: 4,
        column: 1,
        message: 'missing required field `spec.cidr`',
        path: 'spec.cidr',
      },
    ],
  },
  {
    name: 'a duplicate address names the first declaration',
    file: `${net}---\n${net}`,
    want: [
      { code: 'address.duplicate', line: 10, column: 7, message: 'sb.networks/main', path: 'name' },
    ],
  },
  {
    name: 'a dangling reference',
    file: `kind: Resource\ntype: sb.volumes\nname: data\nspec:\n  name: data\n  instance_id: \${sb.instances/web.id}\n  size: 1\n`,
    want: [
      {
        code: 'ref.dangling',
        line: 6,
        column: 16,
        message: 'sb.instances/web',
        path: 'spec.instance_id',
      },
    ],
  },
  {
    name: 'a reference cycle prints the cycle',
    file: `kind: Resource\ntype: sb.instances\nname: a\nspec:\n  name: a\n  network_id: \${sb.instances/b.id}\n  image: x\n---\nkind: Resource\ntype: sb.instances\nname: b\nspec:\n  name: b\n  network_id: \${sb.instances/a.id}\n  image: x\n`,
    want: [
      {
        code: 'ref.cycle',
        line: 6,
        column: 15,
        message: 'sb.instances/a → sb.instances/b → sb.instances/a',
      },
    ],
  },
  {
    name: 'a secret written inline',
    file: `${net}---\nkind: Resource\ntype: sb.instances\nname: web\nspec:\n  name: web\n  network_id: \${sb.networks/main.id}\n  image: debian\n  admin_password: hunter2-inline\n`,
    want: [
      {
        code: 'secret.inline',
        line: 15,
        column: 19,
        message: 'admin_password',
        path: 'spec.admin_password',
      },
    ],
  },
];

describe('bad intent is refused before anything is sent', () => {
  let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
  const dirs: string[] = [];
  beforeAll(async () => {
    sandbox = await startSandboxProcess();
  });
  afterAll(async () => {
    await sandbox?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  for (const c of cases) {
    it(c.name, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tend-bad-'));
      dirs.push(dir);
      copyFileSync(SPEC, join(dir, 'openapi.json'));
      writeFileSync(join(dir, 'provider.yaml'), provider(sandbox.url));
      writeFileSync(join(dir, 'main.yaml'), c.file);
      for (const command of ['validate', 'apply']) {
        const r = await runCli(command === 'apply' ? ['apply', dir, '--yes'] : ['validate', dir]);
        expect(r.code, r.stdout + r.stderr).toBe(1);
        for (const w of c.want) {
          const loc = `${join(dir, 'main.yaml')}:${w.line}:${w.column}: error[${w.code}]`;
          const line = r.stderr.split('\n').find((l) => l.startsWith(loc));
          expect(line, `expected a line starting ${loc} in:\n${r.stderr}`).toBeDefined();
          expect(line).toContain(w.message);
          if (w.path) expect(line).toContain(`(at ${w.path})`);
        }
        expect(r.stderr).toMatch(/\d+ errors?; nothing was sent to any API\./);
        expect(r.stderr).not.toContain('hunter2-inline');
      }
      const json = await runCli(['validate', dir, '--json']);
      const parsed = JSON.parse(json.stdout) as { ok: boolean; diagnostics: { code: string }[] };
      expect(parsed.ok).toBe(false);
      expect(parsed.diagnostics.map((d) => d.code)).toEqual(
        expect.arrayContaining(c.want.map((w) => w.code)),
      );
      const stats = await sandbox.stats();
      expect(stats.requests).toBe(0);
      expect(await sandbox.objects()).toEqual([]);
    });
  }
  it('shows what a provider found wrong in its document as a warning at the Provider document', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tend-bad-'));
    dirs.push(dir);
    const doc = JSON.parse(readFileSync(SPEC, 'utf8')) as Record<string, unknown>;
    doc['x-tend-audit'] = 'GET /events';
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
    writeFileSync(join(dir, 'provider.yaml'), provider(sandbox.url));
    writeFileSync(join(dir, 'main.yaml'), net);
    const r = await runCli(['validate', dir]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const loc = `${join(dir, 'provider.yaml')}:1:1: warning[provider.warning]: provider sb: `;
    const line = r.stderr.split('\n').find((l) => l.startsWith(loc));
    expect(line, `expected a line starting ${loc} in:\n${r.stderr}`).toContain('x-tend-audit');
    const json = JSON.parse((await runCli(['validate', dir, '--json'])).stdout) as {
      ok: boolean;
      diagnostics: { code: string; severity: string; message: string }[];
    };
    expect(json.ok).toBe(true);
    expect(json.diagnostics).toContainEqual(
      expect.objectContaining({ code: 'provider.warning', severity: 'warning' }),
    );
  });
});
