import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

// Issue 27, item 4, on the built `tend`: a type found without an identity comes with what inspect
// would need, in the human output (a `needs` row) and in --json (`needs`), and the overlay it names,
// pasted as it is, gives the type its identity.

const str = { type: 'string' };
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const DOC = {
  openapi: '3.0.3',
  info: { title: 'widgets', version: '1' },
  paths: {
    '/widgets': {
      get: {
        responses: {
          '200': { description: 'ok', ...json({ type: 'array', items: ref('Widget') }) },
        },
      },
      post: {
        requestBody: json(ref('NewWidget')),
        responses: { '201': { description: 'made', ...json(ref('Widget')) } },
      },
    },
    '/widgets/{widgetId}': {
      parameters: [{ name: 'widgetId', in: 'path', required: true, schema: str }],
      get: { responses: { '200': { description: 'ok', ...json(ref('Widget')) } } },
      delete: { responses: { '204': { description: 'gone' } } },
    },
  },
  components: {
    schemas: {
      Widget: { type: 'object', properties: { id: { type: 'string', readOnly: true }, name: str } },
      NewWidget: { type: 'object', required: ['name'], properties: { name: str } },
    },
  },
};

interface Needs {
  line: string;
  overlay?: { target: string; update: Record<string, string>; when: string };
  probe: string;
}

describe('inspect says what a type without an identity needs (CLI)', () => {
  let dir: string;
  let spec: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tend-inspect-needs-'));
    spec = join(dir, 'widgets.json');
    writeFileSync(spec, JSON.stringify(DOC));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names the overlay keys, their target and the probe, in --json and in the text', async () => {
    const r = await runCli(['providers', 'inspect', spec, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const widgets = (
      JSON.parse(r.stdout) as { types: { name: string; identity: unknown; needs?: Needs }[] }
    ).types.find((t) => t.name === 'widgets')!;
    expect(widgets.identity).toBeNull();
    const probe = `tend providers probe ${spec} --endpoint <url> --type widgets --yes`;
    expect(widgets.needs).toEqual({
      line: `x-tend-identity: natural-key and x-tend-natural-key: name on $.components.schemas.NewWidget, if the platform refuses a second widgets object with the same name (\`${probe}\` finds out)`,
      overlay: {
        target: '$.components.schemas.NewWidget',
        update: { 'x-tend-identity': 'natural-key', 'x-tend-natural-key': 'name' },
        when: 'the platform refuses a second widgets object with the same name',
      },
      probe,
    });
    const text = await runCli(['providers', 'inspect', spec]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`  needs        ${widgets.needs!.line}`);
  });

  it('the overlay it names, written as it says, gives the type its identity', async () => {
    const r = await runCli(['providers', 'inspect', spec, '--json']);
    const needs = (JSON.parse(r.stdout) as { types: { needs?: Needs }[] }).types[0]!.needs!;
    const overlay = join(dir, 'widgets.overlay.yaml');
    writeFileSync(
      overlay,
      [
        'overlay: 1.0.0',
        'info: { title: widgets, version: 1.0.0 }',
        'actions:',
        `  - target: ${JSON.stringify(needs.overlay!.target)}`,
        '    update:',
        ...Object.entries(needs.overlay!.update).map(([k, v]) => `      ${k}: ${v}`),
      ].join('\n'),
    );
    const after = await runCli(['providers', 'inspect', spec, '--overlay', overlay, '--json']);
    expect(after.code, after.stderr).toBe(0);
    const widgets = (
      JSON.parse(after.stdout) as {
        types: { identity: unknown; naturalKey?: string[]; needs?: unknown }[];
      }
    ).types[0]!;
    expect(widgets).toMatchObject({ identity: 'natural-key', naturalKey: ['name'] });
    expect(widgets.needs).toBeUndefined();
  });
});
