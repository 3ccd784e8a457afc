import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv } from 'ajv';
import { applyPatch } from 'diff';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readChangeset } from '../../src/engine/index.js';
import { CLI, copyExample, runCli, startCli } from '../support/cli.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { scaleServiceAs, startSandboxProcess } from '../support/sandbox-process.js';

// Issue 15, item 3: an MCP conversation through the SDK's own client against the built
// `tend mcp <dir>` (stdio, and once over streamable HTTP), on the quickstart against a real sandbox.

const env = { QUICKSTART_ADMIN_PASSWORD: 'mcp-quickstart-secret' };
const TOOLS = ['announce', 'compliance', 'explain', 'history', 'plan', 'propose_change', 'status'];

/** Validates each tool's structured results against the output schema `tools/list` gave. */
function outputValidator(tools: readonly Tool[]) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  const validators = new Map(
    tools.map((t) => [t.name, ajv.compile(t.outputSchema as Record<string, unknown>)] as const),
  );
  return (tool: string, r: CallToolResult): Record<string, unknown> => {
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    const validate = validators.get(tool)!;
    expect(validate(r.structuredContent), JSON.stringify(validate.errors)).toBe(true);
    // The text content is the same document, for clients that read text only.
    const first = r.content[0] as { type: string; text: string };
    expect(JSON.parse(first.text)).toEqual(r.structuredContent);
    return r.structuredContent as Record<string, unknown>;
  };
}

/** The text of a tool error. */
function errorText(r: CallToolResult): string {
  expect(r.isError).toBe(true);
  return (r.content as { type: string; text: string }[]).map((c) => c.text).join('\n');
}

describe('tend mcp over stdio: the client closes stdin', () => {
  // No sandbox: nothing here reads the platform (the intent is read only when a tool is called).
  const ex = copyExample('quickstart', 'http://127.0.0.1:9');
  afterAll(() => ex.cleanup());

  it('exits 0 when stdin closes without any message', async () => {
    const r = await runCli(['mcp', ex.dir], { env, timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
  });

  it('answers what it was asked before stdin closed, then exits 0', async () => {
    const init = {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'eof-test', version: '1' },
    };
    const input = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: init },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
    ]
      .map((m) => `${JSON.stringify(m)}\n`)
      .join('');
    const r = await runCli(['mcp', ex.dir], { env, input, timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    const answers = r.stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { id: number; result?: { tools?: unknown[] } });
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers[1]!.result?.tools).toHaveLength(TOOLS.length);
  });
});

describe('tend mcp over stdio (SDK client, quickstart, real sandbox process)', () => {
  let sandbox: SandboxHandle;
  let ex: ReturnType<typeof copyExample>;
  let client: Client;
  let check: ReturnType<typeof outputValidator>;
  let tools: Tool[];
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    ex = copyExample('quickstart', sandbox.url);
    const applied = await runCli(['apply', ex.dir], { env });
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp', ex.dir],
        env: { ...(process.env as Record<string, string>), ...env },
        stderr: 'pipe',
      }),
    );
    tools = (await client.listTools()).tools;
    check = outputValidator(tools);
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    await sandbox?.stop();
    ex?.cleanup();
  });

  it('lists the seven tools, each with an input and an output schema', () => {
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    for (const t of tools) {
      expect(t.inputSchema.type, t.name).toBe('object');
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(t.description, t.name).toBeTruthy();
    }
    const announce = tools.find((t) => t.name === 'announce')!;
    expect(announce.inputSchema.required).toEqual(
      expect.arrayContaining(['address', 'field', 'actor', 'intent', 'motivation']),
    );
  });

  it('plan: the quickstart as applied has nothing to change, and the same call gives the same result', async () => {
    const first = check('plan', await call('plan'));
    expect(first['changes']).toBe(false);
    const steps = first['steps'] as { kind: string; address: string }[];
    expect(steps.map((s) => s.address).sort()).toEqual([
      'sb.buckets/assets',
      'sb.instances/web',
      'sb.networks/main',
      'sb.services/api',
      'sb.volumes/data',
    ]);
    expect(steps.every((s) => s.kind === 'noop')).toBe(true);
    expect(first['blastRadius']).toEqual([]);
    const again = check('plan', await call('plan'));
    expect(again).toEqual(first);
    const targeted = check('plan', await call('plan', { targets: ['sb.services/api'] }));
    expect((targeted['steps'] as { address: string }[]).map((s) => s.address).sort()).toEqual([
      'sb.networks/main',
      'sb.services/api',
    ]);
  });

  it('plan: a drifted field shows the step and the decision', async () => {
    expect(await scaleServiceAs(sandbox, 4)).toBe(200);
    const planned = check('plan', await call('plan'));
    const api = (planned['steps'] as { kind: string; address: string }[]).find(
      (s) => s.address === 'sb.services/api',
    )!;
    expect(api.kind).toBe('update');
    const decisions = planned['decisions'] as { address: string; field: string }[];
    expect(decisions).toEqual([
      expect.objectContaining({ address: 'sb.services/api', field: 'replicas' }),
    ]);
    // Put it back for the tests that follow.
    await scaleServiceAs(sandbox, 2);
  });

  it('status: resources by address, providers by name, nobody holding the workspace', async () => {
    const s = check('status', await call('status', { offline: true }));
    const resources = s['resources'] as { address: string; state: string }[];
    expect(resources.map((r) => r.address)).toEqual([...resources.map((r) => r.address)].sort());
    expect(resources.find((r) => r.address === 'sb.services/api')?.state).toBe('converged');
    expect(s['lease']).toBeNull();
  });

  it('explain: a field with its declared and observed values and its owner', async () => {
    const e = check('explain', await call('explain', { target: 'sb.services/api.replicas' }));
    expect(e['address']).toBe('sb.services/api');
    expect(e['field']).toBe('replicas');
    const [field] = e['fields'] as {
      field: string;
      declared: { written: unknown };
      observed: unknown;
    }[];
    expect(field).toMatchObject({ field: 'replicas', declared: { written: 2 } });
  });

  it('history: the ledger filtered by actor, oldest first', async () => {
    const h = check('history', await call('history', { actor: 'tend', address: 'sb.services/*' }));
    const changes = h['changes'] as {
      seq: number;
      actor: string;
      address: string;
      action: string;
    }[];
    expect(changes.length).toBeGreaterThan(0);
    expect(changes.every((c) => c.actor === 'tend' && c.address === 'sb.services/api')).toBe(true);
    expect(changes[0]!.action).toBe('create');
    expect(changes.map((c) => c.seq)).toEqual([...changes.map((c) => c.seq)].sort((a, b) => a - b));
    expect(h['ledger']).toMatchObject({ ok: true });
  });

  it('announce: stored with the agent as the actor (kind agent unless given)', async () => {
    const a = check(
      'announce',
      await call('announce', {
        address: 'sb.services/api',
        field: 'replicas',
        value: 5,
        actor: 'scaling-agent',
        intent: 'availability',
        motivation: 'traffic',
        ttl: '30m',
      }),
    );
    const [stored] = a['announcements'] as Record<string, unknown>[];
    expect(stored).toMatchObject({
      address: 'sb.services/api',
      field: 'replicas',
      value: 5,
      actor: 'scaling-agent',
      actorKind: 'agent',
      intent: 'availability',
      motivation: expect.objectContaining({ kind: 'traffic' }),
    });
    const listed = await runCli(['announce', '--list', ex.dir, '--json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const list = JSON.parse(listed.stdout) as { announcements: { id: string }[] };
    expect(list.announcements.map((x) => x.id)).toContain(stored!['id']);
  });

  it('announce without intent or motivation: a clear error naming both, with examples; nothing stored', async () => {
    const listAll = async () =>
      (
        JSON.parse(
          (await runCli(['announce', '--list', '--all', ex.dir, '--json'], { env })).stdout,
        ) as { announcements: unknown[] }
      ).announcements;
    const before = await listAll();
    const text = errorText(
      await call('announce', {
        address: 'sb.services/api',
        field: 'replicas',
        value: 6,
        actor: 'scaling-agent',
      }),
    );
    expect(text).toContain('intent is missing');
    expect(text).toContain('"intent": "availability"');
    expect(text).toContain('motivation is missing');
    expect(text).toContain('"motivation": "incident"');
    expect(await listAll()).toEqual(before);
  });

  it.each([
    {
      reason: 'announce without actor',
      tool: 'announce',
      args: {
        address: 'sb.services/api',
        field: 'replicas',
        value: 1,
        intent: 'cost',
        motivation: 'budget',
      },
      message: 'actor is missing: who makes the change, e.g. "actor": "deploy-agent"',
    },
    {
      reason: 'announce with an empty intent',
      tool: 'announce',
      args: {
        address: 'sb.services/api',
        field: 'replicas',
        value: 1,
        actor: 'a',
        intent: '',
        motivation: 'budget',
      },
      message: 'intent is empty',
    },
    {
      reason: 'announce of an undeclared resource (checked by the application layer)',
      tool: 'announce',
      args: {
        address: 'sb.services/apx',
        field: 'replicas',
        value: 1,
        actor: 'a',
        intent: 'cost',
        motivation: 'budget',
      },
      message: 'sb.services/api',
    },
    {
      reason: 'announce with a ttl Tend cannot read',
      tool: 'announce',
      args: {
        address: 'sb.services/api',
        field: 'replicas',
        value: 1,
        actor: 'a',
        intent: 'cost',
        motivation: 'budget',
        ttl: 'soon',
      },
      message: 'ttl',
    },
    {
      reason: 'an argument the tool does not take',
      tool: 'status',
      args: { offlin: true },
      message: 'offlin',
    },
    {
      reason: 'plan with a target that is not an address',
      tool: 'plan',
      args: { targets: ['api'] },
      message:
        'is not an address: write provider.type/name (lower-case letters, digits, - and _; a name holds no /), e.g. sb.services/api',
    },
    {
      // The core's grammar (parseAddress): the MCP pattern used to take a `/` in a name.
      reason: 'plan with a target whose name holds a /',
      tool: 'plan',
      args: { targets: ['sb.services/api/v2'] },
      message: 'a name holds no /',
    },
    {
      reason: 'plan with a target the intent does not declare',
      tool: 'plan',
      args: { targets: ['sb.services/nope'] },
      message: 'sb.services/nope',
    },
    {
      reason: 'explain without a target',
      tool: 'explain',
      args: {},
      message: 'target is missing',
    },
    {
      reason: 'explain of a field the resource does not have',
      tool: 'explain',
      args: { target: 'sb.services/api.replicaz' },
      message: 'replicaz',
    },
    {
      reason: 'history with a limit of 0',
      tool: 'history',
      args: { limit: 0 },
      message: 'must be at least 1',
    },
    {
      reason: 'history with a since Tend cannot read',
      tool: 'history',
      args: { since: 'yesterday-ish' },
      message: 'yesterday-ish',
    },
    {
      reason: 'propose_change with nothing to change',
      tool: 'propose_change',
      args: {},
      message: 'the proposal changes nothing: give set or patch',
    },
    {
      reason: 'propose_change of an undeclared resource',
      tool: 'propose_change',
      args: { set: [{ address: 'sb.services/apj', field: 'replicas', value: 3 }] },
      message: 'did you mean sb.services/api?',
    },
    {
      reason: 'propose_change of a field path Tend cannot read',
      tool: 'propose_change',
      args: { set: [{ address: 'sb.services/api', field: 'replicas..x', value: 3 }] },
      message: 'is not a field path',
    },
    {
      reason: 'propose_change with a patch whose context does not match',
      tool: 'propose_change',
      args: {
        patch: '--- a/app.yaml\n+++ b/app.yaml\n@@ -1,1 +1,1 @@\n-nothing like this\n+something\n',
      },
      message: 'app.yaml: the patch does not apply',
    },
    {
      reason: 'propose_change with a patch outside the intent directory',
      tool: 'propose_change',
      args: { patch: '--- a/../x.yaml\n+++ b/../x.yaml\n@@ -1,1 +1,1 @@\n-a\n+b\n' },
      message: 'is outside the intent directory',
    },
    {
      reason: 'propose_change that would write an invalid intent',
      tool: 'propose_change',
      args: { set: [{ address: 'sb.services/api', field: 'replicas', value: 'many' }] },
      message: 'intent.invalid',
    },
    {
      reason: 'propose_change asked to apply on a server without --allow-apply',
      tool: 'propose_change',
      args: { set: [{ address: 'sb.services/api', field: 'replicas', value: 3 }], apply: true },
      message: 'started without --allow-apply; nothing was written',
    },
  ])('bad input: $reason', async ({ tool, args, message }) => {
    expect(errorText(await call(tool, args))).toContain(message);
  });

  it('propose_change that would write an invalid intent: the problem at the real file, line and column', async () => {
    const text = errorText(
      await call('propose_change', {
        set: [{ address: 'sb.services/api', field: 'replicas', value: 'many' }],
      }),
    );
    expect(text).toMatch(new RegExp(`${ex.dir}/app\\.yaml:\\d+:\\d+: error\\[schema\\.type\\]`));
    expect(text).not.toContain('tend-proposal-');
    expect(text).toContain('nothing was written');
  });

  it('compliance: the PolicyReport of the workspace, the same on the same state', async () => {
    const c = check('compliance', await call('compliance', { limit: 5 }));
    expect(c).toMatchObject({
      apiVersion: 'wgpolicyk8s.io/v1alpha2',
      kind: 'PolicyReport',
      summary: { fail: 0, warn: 0, error: 0 },
      results: [],
    });
    // No time of the call in the result.
    expect(c['since']).toBeUndefined();
    expect((c['metadata'] as Record<string, unknown>)['creationTimestamp']).toBeUndefined();
    expect(check('compliance', await call('compliance', { limit: 5 }))).toEqual(c);
    const bad = await call('compliance', { since: 'last tuesday' });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain(
      '--since \\"last tuesday\\" is neither an ISO time nor a duration',
    );
  });

  it('plan and propose_change return the policy verdicts on the predicted result', async () => {
    ex.write(
      'policies.yaml',
      [
        'kind: Policy',
        'name: services-small',
        'actions: [warn]',
        'match: { types: [sb.services] }',
        'validations:',
        '  - expression: object.replicas <= 2',
        '    message: at most two replicas',
        '',
      ].join('\n'),
    );
    try {
      const planned = check('plan', await call('plan'));
      expect(planned['policies']).toEqual([]);
      const p = check(
        'propose_change',
        await call('propose_change', {
          set: [{ address: 'sb.services/api', field: 'replicas', value: 3 }],
        }),
      );
      expect(p['policies']).toEqual([
        expect.objectContaining({
          policy: 'services-small',
          rule: 0,
          address: 'sb.services/api',
          moment: 'predicted',
          result: 'fail',
          actions: ['warn'],
          message: 'at most two replicas',
        }),
      ]);
    } finally {
      rmSync(join(ex.dir, 'policies.yaml'));
    }
  });

  it('propose_change: writes a saved plan and a patch, touches neither the intent nor the platform; the plan applies once the patch is', async () => {
    const intentBefore = ex.read('app.yaml');
    const statsBefore = await sandbox.stats();
    const p = check(
      'propose_change',
      await call('propose_change', {
        set: [{ address: 'sb.services/api', field: 'replicas', value: 3 }],
      }),
    );
    expect(ex.read('app.yaml')).toBe(intentBefore);
    expect(p['files']).toEqual(['app.yaml']);
    expect(p['diff']).toContain('-  replicas: 2');
    expect(p['diff']).toContain('+  replicas: 3');
    expect(p['changes']).toBe(true);
    expect(p['counts']).toMatchObject({ update: 1 });
    expect(p['destructive']).toEqual([]);
    expect(p['applied']).toBeNull();
    const planFile = p['planFile'] as string;
    const patchFile = p['patchFile'] as string;
    expect(existsSync(planFile) && existsSync(patchFile)).toBe(true);
    expect(readFileSync(patchFile, 'utf8')).toBe(p['diff']);
    // The same proposal on the same state gives the same result (and the same files).
    expect(
      check(
        'propose_change',
        await call('propose_change', {
          set: [{ address: 'sb.services/api', field: 'replicas', value: 3 }],
        }),
      ),
    ).toEqual(p);

    // `tend apply <plan>`'s reader loads it: for the real intent directory, the update of api.
    const saved = await readChangeset(planFile);
    expect(saved.intent.dir).toBe(ex.dir);
    expect(saved.plan.steps.find((s) => s.address === 'sb.services/api')?.kind).toBe('update');
    const statsAfter = await sandbox.stats();
    expect([statsAfter.creates, statsAfter.updates, statsAfter.deletes]).toEqual([
      statsBefore.creates,
      statsBefore.updates,
      statsBefore.deletes,
    ]);

    // Before the patch is applied the saved plan is refused; after it, it is carried out.
    const refused = await runCli(['apply', planFile], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the intent changed since the plan was made');
    const patched = applyPatch(intentBefore, readFileSync(patchFile, 'utf8'));
    expect(patched).not.toBe(false);
    ex.write('app.yaml', patched as string);
    const applied = await runCli(['apply', planFile], { env });
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    const service = (await sandbox.objects()).find((o) => o.type === 'services')!;
    expect(service.fields['replicas']).toBe(3);
  });

  it('propose_change with a patch: a new resource in a new file', async () => {
    const patch = [
      '--- /dev/null',
      '+++ b/extra.yaml',
      '@@ -0,0 +1,6 @@',
      '+kind: Resource',
      '+type: sb.buckets',
      '+name: logs',
      '+spec:',
      '+  name: tend-mcp-logs',
      '+  versioning: false',
      '',
    ].join('\n');
    const p = check('propose_change', await call('propose_change', { patch }));
    expect(p['files']).toEqual(['extra.yaml']);
    expect(existsSync(`${ex.dir}/extra.yaml`)).toBe(false);
    const steps = p['steps'] as { kind: string; address: string }[];
    expect(steps.find((s) => s.address === 'sb.buckets/logs')?.kind).toBe('create');
  });

  it('no result carries the secret the intent reads from the environment', async () => {
    const results = [
      await call('explain', { target: 'sb.instances/web' }),
      await call('explain', { target: 'sb.instances/web.admin_password' }),
      await call('status', {}),
      await call('plan', {}),
      await call('history', { address: 'sb.instances/web' }),
      await call('propose_change', {
        set: [{ address: 'sb.instances/web', field: 'size', value: 'medium' }],
      }),
    ];
    const text = JSON.stringify(results);
    expect(text).toContain('sb.instances/web');
    expect(text).not.toContain(env.QUICKSTART_ADMIN_PASSWORD);
  });

  it('reads the intent on every call: an error with file:line:column, then the fixed intent', async () => {
    ex.write('broken.yaml', 'kind: Resourse\nname: x\n');
    try {
      const text = errorText(await call('status', { offline: true }));
      expect(text).toContain('intent.invalid');
      expect(text).toMatch(/broken\.yaml:1:\d+: error/);
      expect(text).toContain('fix the intent files and call again');
    } finally {
      rmSync(join(ex.dir, 'broken.yaml'));
    }
    check('status', await call('status', { offline: true }));
  });

  it('stdout carries the protocol only: every line is a JSON-RPC message', async () => {
    const child = spawn(process.execPath, [CLI, 'mcp', ex.dir], {
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    const rl = createInterface({ input: child.stdout });
    rl.on('line', (l) => lines.push(l));
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'raw', version: '0' },
      },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'status', arguments: { offline: true } },
    });
    await new Promise<void>((resolve) => {
      const done = () => (lines.length >= 2 ? resolve() : undefined);
      rl.on('line', done);
    });
    child.stdin.end();
    await new Promise((resolve) => child.once('exit', resolve));
    for (const l of lines) expect(() => JSON.parse(l) as unknown, l).not.toThrow();
    expect(lines.map((l) => (JSON.parse(l) as { id: number }).id)).toEqual([1, 2]);
  });
});

describe('tend mcp --http --allow-apply (SDK client over streamable HTTP)', () => {
  let sandbox: SandboxHandle;
  let ex: ReturnType<typeof copyExample>;
  let server: ReturnType<typeof startCli>;
  let url: string;
  let client: Client;

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    ex = copyExample('quickstart', sandbox.url);
    const applied = await runCli(['apply', ex.dir], { env });
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    server = startCli(['mcp', ex.dir, '--http', '--port', '0', '--allow-apply'], { env });
    await server.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+\/mcp/);
    url = /listening on (\S+)/.exec(server.output())![1]!;
    client = new Client({ name: 'http-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    await server?.stop('SIGTERM');
    await sandbox?.stop();
    ex?.cleanup();
  });

  it('lists the tools and plans over HTTP', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    const check = outputValidator(tools);
    const planned = check(
      'plan',
      (await client.callTool({ name: 'plan', arguments: {} })) as CallToolResult,
    );
    expect(planned['changes']).toBe(false);
  });

  it('applies a proposal without destructive steps, as the agent, and refuses one with a replace', async () => {
    const r = (await client.callTool({
      name: 'propose_change',
      arguments: {
        set: [{ address: 'sb.services/api', field: 'replicas', value: 4 }],
        apply: true,
        intent: 'availability',
        motivation: 'traffic',
      },
    })) as CallToolResult;
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    const p = r.structuredContent as { applied: { verdict: string; applied: boolean } };
    expect(p.applied).toMatchObject({ verdict: 'ok', applied: true });
    expect(ex.read('app.yaml')).toContain('replicas: 4');
    const service = (await sandbox.objects()).find((o) => o.type === 'services')!;
    expect(service.fields['replicas']).toBe(4);
    const h = await runCli(['history', ex.dir, '--actor', 'http-agent', '--json'], { env });
    const changes = (JSON.parse(h.stdout) as { changes: Record<string, unknown>[] }).changes;
    // Tend carried the change out (source and kind tend) for the agent that proposed it.
    expect(changes, h.stdout + h.stderr).toEqual([
      expect.objectContaining({
        actor: 'http-agent',
        intent: 'availability',
        source: 'tend',
        address: 'sb.services/api',
        fields: ['replicas'],
      }),
    ]);

    // cidr is create-only: a new network means replacing it, and everything downstream.
    const before = ex.read('app.yaml');
    const destructive = (await client.callTool({
      name: 'propose_change',
      arguments: {
        set: [{ address: 'sb.networks/main', field: 'cidr', value: '10.20.0.0/16' }],
        apply: true,
      },
    })) as CallToolResult;
    expect(errorText(destructive)).toContain('a proposal is never applied with a destructive step');
    expect(ex.read('app.yaml')).toBe(before);
    // Without apply the same proposal is written for a human, with its blast radius.
    const proposed = (await client.callTool({
      name: 'propose_change',
      arguments: { set: [{ address: 'sb.networks/main', field: 'cidr', value: '10.20.0.0/16' }] },
    })) as CallToolResult;
    const q = proposed.structuredContent as { destructive: string[]; blastRadius: string[] };
    expect(q.destructive).toContain('sb.networks/main');
    expect(q.blastRadius).toEqual(expect.arrayContaining(['sb.instances/web', 'sb.services/api']));
  });

  it.each<{ reason: string; init: RequestInit; status: number; message: string }>([
    {
      reason: 'a GET without a session',
      init: { method: 'GET', headers: { accept: 'text/event-stream' } },
      status: 400,
      message: 'no session: POST an initialize request first',
    },
    {
      reason: 'a session the server does not have',
      init: {
        method: 'POST',
        headers: {
          'mcp-session-id': 'no-such-session',
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      },
      status: 404,
      message:
        'no such session (it ended, sat unused for 30 min, or the server restarted): initialize again',
    },
  ])('HTTP: $reason is refused with a JSON-RPC error', async ({ init, status, message }) => {
    const r = await fetch(url, init);
    expect(r.status).toBe(status);
    expect(((await r.json()) as { error: { message: string } }).error.message).toBe(message);
  });

  it('a second server on the same port: exit 1, saying what to do', async () => {
    const port = new URL(url).port;
    const r = await runCli(['mcp', ex.dir, '--http', '--port', port], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`127.0.0.1:${port} is already in use`);
    expect(r.stderr).toContain('--port 0');
  });

  it('refuses a request whose Host is not the server address (DNS rebinding)', async () => {
    // fetch sets Host itself: node:http sends the one a rebound DNS name would carry.
    const { status, body } = await new Promise<{ status: number; body: string }>(
      (resolve, reject) => {
        const req = request(
          url,
          {
            method: 'POST',
            headers: {
              host: 'evil.example',
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
            },
          },
          (res) => {
            let text = '';
            res.on('data', (d: Buffer) => (text += d.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
      },
    );
    expect(status).toBe(403);
    expect(body).toContain("is not this server's address");
  });
});
