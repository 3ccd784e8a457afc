import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultContext } from '../../src/app/index.js';
import { Redactor } from '../../src/core/index.js';
import { createMcpServer } from '../../src/mcp/index.js';
import { app } from '../../src/server/app.js';
import { EventHub } from '../../src/server/event-hub.js';
import { Metrics } from '../../src/server/metrics.js';
import { copyExample, runCli } from '../support/cli.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// Issue 25, item 5: `tend plan --json` (the built CLI), `POST /plan` and the MCP `plan` tool (both
// in-process) give the same plan view for the same workspace — one definition (app/plan-view.ts).
// The plan has an update and a delete (destructive), so every part of the view is exercised.

const env = { QUICKSTART_ADMIN_PASSWORD: 'plan-view-quickstart-secret' };

describe('one plan view: CLI --json, POST /plan, MCP plan', { timeout: 180_000 }, () => {
  let sandbox: SandboxHandle;
  let ex: ReturnType<typeof copyExample>;

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    ex = copyExample('quickstart', sandbox.url);
    const applied = await runCli(['apply', ex.dir], { env });
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    ex.write(
      'app.yaml',
      ex
        .read('app.yaml')
        .replace(/replicas: \d+/, 'replicas: 7')
        .replace(/---\nkind: Resource\ntype: sb.buckets[\s\S]*?versioning: true\n/, ''),
    );
  }, 120_000);

  afterAll(async () => {
    await sandbox.stop();
    ex.cleanup();
  });

  it('the three adapters answer the same document', async () => {
    const cli = await runCli(['plan', ex.dir, '--json'], { env });
    expect(cli.code, cli.stderr).toBe(2);
    const fromCli = JSON.parse(cli.stdout) as Record<string, unknown>;

    const ctx = defaultContext({
      env: { ...process.env, ...env },
      redactor: new Redactor(),
      notice: () => {},
    });
    const api = app({
      ctx,
      workspace: { dir: ex.dir },
      hub: new EventHub(() => new Date()),
      metrics: new Metrics(),
      version: '0.0.0-test',
      tokens: 'none',
    });
    const answer = await api.request('/plan', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(answer.status).toBe(201);
    const { id, ...fromHttp } = (await answer.json()) as Record<string, unknown>;
    expect(id).toMatch(/^\d{8}T\d{9}Z-[0-9a-f]{8}$/);

    const server = createMcpServer(ctx, {
      selection: { dir: ex.dir },
      allowApply: false,
      version: '0.0.0-test',
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'plan-view-test', version: '1' });
    await client.connect(clientSide);
    const r = (await client.callTool({ name: 'plan', arguments: {} })) as CallToolResult;
    await client.close();
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    const fromMcp = r.structuredContent as Record<string, unknown>;

    // The plan is one worth comparing: an update and a destructive delete.
    expect(fromCli['destructive']).toEqual(['sb.buckets/assets']);
    expect((fromCli['counts'] as Record<string, number>)['update']).toBeGreaterThan(0);
    expect(Object.keys(fromCli).sort()).toEqual(
      [
        'blastRadius',
        'blocked',
        'changes',
        'counts',
        'decisions',
        'destructive',
        'duplicates',
        'gated',
        'orphans',
        'policies',
        'replacing',
        'steps',
        'unlisted',
        'workspace',
      ].sort(),
    );
    expect(fromHttp).toEqual(fromCli);
    expect(fromMcp).toEqual(fromCli);
  });
});
