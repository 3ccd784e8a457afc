import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectLinear } from '../../test/support/scaling.js';
import type { ProviderDescription } from '../core/index.js';
import { loadIntent } from './index.js';

// Issue 10, item 7: loading an intent costs time linear in its size — in resources, in documents
// per file, in fields and in diagnostics — and never overflows the stack.

const SANDBOX: ProviderDescription = {
  auditFeed: false,
  warnings: [],
  types: [
    {
      name: 'networks',
      schema: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          cidr: { type: 'string' },
          tags: { type: 'object', additionalProperties: { type: 'string' } },
        },
        required: ['name'],
      },
      identity: 'marker',
      idField: 'id',
      createOnly: [],
      outputOnly: [],
      sensitive: [],
      lifecycle: 'platform',
      idempotencyKey: true,
    },
  ],
};

const describeProvider = () => Promise.resolve(SANDBOX);
const PROVIDER =
  'kind: Provider\nname: sb\ntype: openapi\nspec: ./s.json\nendpoint: http://127.0.0.1:9/\n';

let root = '';
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tend-large-intent-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** An intent directory with one provider and one file holding `text`. */
async function intent(name: string, text: string): Promise<string> {
  const dir = join(root, name);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir);
  await writeFile(join(dir, 's.json'), '{}');
  await writeFile(join(dir, 'providers.yaml'), PROVIDER);
  await writeFile(join(dir, 'main.yaml'), text);
  return dir;
}

describe('large intents', () => {
  it('loads N resources (one file of N documents, with references) in time linear in N', async () => {
    const dirs = new Map<number, string>();
    for (const n of [400, 1_600]) {
      const docs: string[] = [];
      for (let i = 0; i < n; i++) {
        const ref = i > 0 ? `\n    parent: \${sb.networks/n${i - 1}.id}` : '';
        docs.push(
          `kind: Resource\ntype: sb.networks\nname: n${i}\nspec:\n  name: net-${i}\n  tags:\n    team: t${i % 10}${ref}\n`,
        );
      }
      dirs.set(n, await intent(`many-${n}`, docs.join('---\n')));
    }
    await expectLinear(
      async (n) => {
        const r = await loadIntent(dirs.get(n)!, { describe: describeProvider });
        expect(r.diagnostics).toEqual([]);
        expect(r.intent!.resources).toHaveLength(n);
      },
      400,
      { tries: 3 },
    );
  });

  it('reports N unknown fields of one resource, each at its line, in time linear in N', async () => {
    const dirs = new Map<number, string>();
    for (const n of [2_000, 8_000]) {
      const fields = Array.from({ length: n }, (_, i) => `  f${i}: x`).join('\n');
      dirs.set(
        n,
        await intent(
          `unknown-${n}`,
          `kind: Resource\ntype: sb.networks\nname: n\nspec:\n  name: x\n${fields}\n`,
        ),
      );
    }
    await expectLinear(
      async (n) => {
        const r = await loadIntent(dirs.get(n)!, { describe: describeProvider });
        const unknown = r.diagnostics.filter((d) => d.code === 'schema.unknown_field');
        expect(unknown).toHaveLength(n);
        expect(unknown.at(-1)!.line).toBe(n + 5);
      },
      2_000,
      { tries: 3 },
    );
  });

  it('refuses an intent file holding a YAML alias bomb within a second, at file:line:column', async () => {
    const lines = [
      'kind: Resource',
      'type: sb.networks',
      'name: n',
      'spec:',
      '  name: x',
      '  tags:',
    ];
    lines.push('    a0: &a0 [x, x, x, x, x, x, x, x, x, x]');
    for (let i = 1; i < 10; i++)
      lines.push(
        `    a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    const dir = await intent('bomb', `${lines.join('\n')}\n`);
    const started = performance.now();
    const r = await loadIntent(dir, { describe: describeProvider });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(r.intent).toBeUndefined();
    expect(r.diagnostics).toEqual([
      expect.objectContaining({
        code: 'yaml.limit',
        severity: 'error',
        file: join(dir, 'main.yaml'),
        line: 12,
        message:
          'YAML document refused: its aliases expand it by more than 1,000,000 values (an alias bomb?)',
      }),
    ]);
  });
});
