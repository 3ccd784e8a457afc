import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv } from 'ajv';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactsDir, chromiumMissing, launchChromium, snap } from '../support/browser.js';
import type { CliProcess, CliResult } from '../support/cli.js';
import { CLI, runCli, startCli } from '../support/cli.js';
import type { FleetJson } from '../support/fleet.js';
import { serviceIntent, sleep } from '../support/fleet.js';
import type { PostgresHandle } from '../support/postgres.js';
import { POSTGRES, startPostgres } from '../support/postgres.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// Issue 26 item 5, last sentence (docs/web.md and docs/mcp.md "A fleet", decision 0047): the built
// CLI — one PostgreSQL cluster that asks for a password, one sandbox process, two registered
// directory workspaces (shop with replicas 1, blog with replicas 2), one `tend worker` holding both,
// one `tend serve --fleet` node and `tend mcp --fleet` over stdio (the SDK's client). The page of the
// node lists the workspaces and shows the one the address names, every call under
// /workspaces/<name>/…, in chromium; the routes it calls answer per workspace; the MCP tools take the
// workspace they are about. With CI=true a missing PostgreSQL (or chromium) fails the suite.

const LEDGER_KEY = 'fleet-selector-e2e-ledger-key-0123456789abcdef';
const DB_PASSWORD = 'fleet-selector-db-password-5d1e';
const TOKEN = 'fleet-selector-viewer-token-0123456789abcdef';
const WORKSPACES = { blog: 2, shop: 1 } as const;
const NAMES = Object.keys(WORKSPACES).sort() as (keyof typeof WORKSPACES)[];
const chromium = chromiumMissing();

/** The text of a tool error. */
function errorText(r: CallToolResult): string {
  expect(r.isError, JSON.stringify(r.structuredContent)).toBe(true);
  return (r.content as { type: string; text: string }[]).map((c) => c.text).join('\n');
}

describe.skipIf(POSTGRES.skip)(
  `a fleet's workspace selector: the web page of tend serve --fleet and tend mcp --fleet${POSTGRES.note}`,
  () => {
    let server: PostgresHandle;
    let sandbox: SandboxHandle;
    let url: string;
    let root: string;
    let node: { process: CliProcess; url: string };
    const processes: CliProcess[] = [];
    const env = () => ({ TEND_STORE_URL: url, TEND_LEDGER_KEY: LEDGER_KEY });
    const tend = (args: string[], extra: Record<string, string> = {}): Promise<CliResult> =>
      runCli(args, { env: { ...env(), ...extra } });
    const get = (path: string) =>
      fetch(`${node.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });

    beforeAll(async () => {
      server = await startPostgres({ auth: 'scram-sha-256', superPassword: DB_PASSWORD });
      await server.createDatabase('fleet_selector');
      url = `postgres://postgres:${DB_PASSWORD}@127.0.0.1:${server.port}/fleet_selector`;
      root = mkdtempSync(join(tmpdir(), 'tend-fleet-selector-'));
      sandbox = await startSandboxProcess();
      for (const name of NAMES) {
        mkdirSync(join(root, name));
        writeFileSync(
          join(root, name, 'intent.yaml'),
          serviceIntent(sandbox.url, name, WORKSPACES[name]),
        );
        const added = await tend(['workspace', 'add', name, '--dir', join(root, name)]);
        expect(added.code, added.stdout + added.stderr).toBe(0);
      }
      const worker = startCli(['worker', '--id', 'w-1', '--interval', '2', '--lease-ttl', '10'], {
        env: env(),
      });
      processes.push(worker);
      const p = startCli(['serve', '--fleet', '--port', '0', '--log-format', 'json'], {
        env: {
          ...env(),
          TEND_API_TOKENS: JSON.stringify([{ token: TOKEN, role: 'viewer', name: 'browser' }]),
        },
      });
      processes.push(p);
      await p.waitFor(/"kind":"listening","url":"[^"]+"/, 90_000);
      node = { process: p, url: /"kind":"listening","url":"([^"]+)"/.exec(p.output())![1]! };
      // Both workspaces converged by the worker (generous: the machine is shared).
      const end = Date.now() + 150_000;
      for (;;) {
        const r = await tend(['fleet', 'status', '--json']);
        const s = JSON.parse(r.stdout || '{"workspaces":[]}') as FleetJson;
        if (s.workspaces.length === 2 && s.workspaces.every((w) => w.states['converged'] === 1))
          break;
        if (Date.now() > end) throw new Error(`not converged: ${r.stdout}${r.stderr}`);
        await sleep(500);
      }
    }, 300_000);

    afterAll(async () => {
      for (const p of processes) await p.stop('SIGTERM');
      await sandbox?.stop();
      await server?.stop();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    describe('the web page of tend serve --fleet', () => {
      it('serves the fleet page (selector, list) and its modules without a token', async () => {
        const page = await fetch(`${node.url}/`);
        expect(page.status).toBe(200);
        expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
        const html = await page.text();
        expect(html).toContain('<body data-fleet="true">');
        expect(html).toContain('data-testid="workspace-select"');
        const main = await fetch(`${node.url}/ui/main.js`);
        expect(main.status).toBe(200);
        expect(await main.text()).toContain('/workspaces/');
      });

      it('answers every route the page calls, per workspace, with that workspace', async () => {
        const list = (await (await get('/workspaces')).json()) as FleetJson;
        expect(list.workspaces.map((w) => [w.name, w.holder?.worker])).toEqual([
          ['blog', 'w-1'],
          ['shop', 'w-1'],
        ]);
        for (const name of NAMES) {
          const at = `/workspaces/${name}`;
          const graph = (await (await get(`${at}/graph`)).json()) as {
            workspace: { name: string };
            nodes: { address: string; state: string }[];
          };
          expect(graph.workspace.name).toBe(name);
          expect(graph.nodes.map((n) => [n.address, n.state])).toEqual([
            ['sb.services/api', 'converged'],
          ]);
          const drift = await get(`${at}/drift`);
          expect(drift.status, await drift.clone().text()).toBe(200);
          const resource = (await (
            await get(`${at}/resources/${encodeURIComponent('sb.services/api')}?limit=5`)
          ).json()) as { fields: { field: string; declared?: { written: unknown } }[] };
          expect(resource.fields.find((f) => f.field === 'replicas')?.declared?.written).toBe(
            WORKSPACES[name],
          );
          const history = (await (await get(`${at}/history?limit=200`)).json()) as {
            changes: { address: string }[];
          };
          expect(history.changes.map((c) => c.address)).toContain('sb.services/api');
          // No plan saved through the API yet: the page says so from this 404.
          const plan = await get(`${at}/plans/last`);
          expect([
            plan.status,
            ((await plan.json()) as { error: { code: string } }).error.code,
          ]).toEqual([404, 'plan.not_found']);
          // The event stream of the workspace opens (its first event says so).
          const abort = new AbortController();
          const events = await fetch(`${node.url}${at}/events`, {
            headers: { authorization: `Bearer ${TOKEN}` },
            signal: abort.signal,
          });
          expect(events.headers.get('content-type')).toContain('text/event-stream');
          const first = await events.body!.getReader().read();
          expect(new TextDecoder().decode(first.value)).toContain('event: ready');
          abort.abort();
        }
        const unknown = await get('/workspaces/nope/graph');
        expect(unknown.status).toBe(404);
      });

      describe.skipIf(chromium !== undefined)(
        `in chromium${chromium ? ` (skipped: ${chromium})` : ''}`,
        { timeout: 120_000 },
        () => {
          let browser: Browser;
          let page: Page;
          const calls: string[] = [];
          beforeAll(async () => {
            browser = await launchChromium();
            page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
            page.on('request', (r) => {
              const path = new URL(r.url()).pathname;
              if (!path.startsWith('/ui/') && path !== '/' && path !== '/favicon.ico')
                calls.push(path);
            });
          });
          afterAll(async () => {
            await browser?.close();
          });

          it('lists the workspaces with their holder and states when the address names none', async () => {
            await page.goto(`${node.url}/?token=${TOKEN}`);
            const rows = page.getByTestId('workspace-row');
            await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(2);
            expect(await rows.nth(0).getAttribute('data-name')).toBe('blog');
            expect(await rows.nth(1).textContent()).toContain('w-1');
            expect(await rows.nth(1).textContent()).toContain('1 converged');
            expect(await page.getByTestId('view-graph').isHidden()).toBe(true);
            expect(await page.getByTestId('live').isHidden()).toBe(true);
            await snap(page, artifactsDir('fleet-selector'), '1-workspaces');
          });

          it('shows the workspace the address names, every call under /workspaces/<name>/', async () => {
            await page.goto('about:blank');
            calls.length = 0;
            await page.goto(`${node.url}/#/workspaces/shop`);
            const api = page.getByTestId('node-sb.services/api');
            await expect
              .poll(() => api.getAttribute('data-state'), { timeout: 20_000 })
              .toBe('converged');
            expect(await page.getByTestId('workspace').textContent()).toBe('workspace shop');
            await expect.poll(() => page.getByTestId('live').textContent()).toBe('live');
            expect(await page.getByTestId('workspace-select').inputValue()).toBe('shop');
            await api.click();
            await expect
              .poll(() => page.getByTestId('field-replicas').locator('td').nth(1).textContent())
              .toBe('1');
            await snap(page, artifactsDir('fleet-selector'), '2-shop');
            expect(calls).toContain('/workspaces');
            expect(calls).toContain('/workspaces/shop/graph');
            expect(calls).toContain('/workspaces/shop/events');
            expect(
              calls.filter((c) => c !== '/workspaces' && !c.startsWith('/workspaces/shop/')),
            ).toEqual([]);
          });

          it('switches with the selector (the address keeps the choice across a reload)', async () => {
            await page.getByTestId('workspace-select').selectOption('blog');
            await expect
              .poll(() => page.getByTestId('workspace').textContent(), { timeout: 20_000 })
              .toBe('workspace blog');
            expect(new URL(page.url()).hash).toBe('#/workspaces/blog');
            await page.reload();
            await expect
              .poll(() => page.getByTestId('workspace').textContent(), { timeout: 20_000 })
              .toBe('workspace blog');
            // The graph of blog, its event stream open: only then is a click on a node not lost
            // to the re-render the stream's first events cause (CI once clicked in between).
            const api = page.getByTestId('node-sb.services/api');
            await expect
              .poll(() => api.getAttribute('data-state'), { timeout: 20_000 })
              .toBe('converged');
            await expect.poll(() => page.getByTestId('live').textContent()).toBe('live');
            const replicas = page.getByTestId('field-replicas').locator('td').nth(1);
            await expect
              .poll(
                async () => {
                  if (!(await replicas.isVisible())) await api.click();
                  return replicas.textContent({ timeout: 2_000 });
                },
                { timeout: 20_000 },
              )
              .toBe('2');
          });

          it('says a name is not registered, with the list, and shows it as text', async () => {
            const hostile = '<img src=x>';
            await page.goto('about:blank');
            await page.goto(`${node.url}/#/workspaces/${encodeURIComponent(hostile)}`);
            await expect
              .poll(() => page.getByTestId('notice').textContent(), { timeout: 20_000 })
              .toBe(`no workspace "${hostile}" is registered in this fleet: pick one below`);
            expect(await page.getByTestId('workspace-row').count()).toBe(2);
            expect(await page.locator('img').count()).toBe(0);
            await snap(page, artifactsDir('fleet-selector'), '3-unknown-name');
          });
        },
      );
    });

    describe('tend mcp --fleet over stdio (the SDK client)', () => {
      let client: Client;
      let tools: Tool[];
      const transcript: string[] = [];
      const call = async (name: string, args: Record<string, unknown> = {}) => {
        const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
        transcript.push(JSON.stringify(r));
        return r;
      };
      beforeAll(async () => {
        client = new Client({ name: 'fleet-agent', version: '1.0.0' });
        await client.connect(
          new StdioClientTransport({
            command: process.execPath,
            args: [CLI, 'mcp', '--fleet'],
            env: { ...(process.env as Record<string, string>), ...env() },
            stderr: 'pipe',
          }),
        );
        tools = (await client.listTools()).tools;
      }, 60_000);
      afterAll(async () => {
        await client?.close();
      });

      it('lists list_workspaces and the seven tools, each taking a required workspace', () => {
        expect(tools.map((t) => t.name)).toEqual([
          'list_workspaces',
          'status',
          'plan',
          'explain',
          'history',
          'compliance',
          'announce',
          'propose_change',
        ]);
        // Each nullable field is its own anyOf branch: no type list (the inspector's --strict warns).
        expect(JSON.stringify(tools)).not.toMatch(/"type":\[/);
        for (const t of tools.slice(1)) {
          expect(t.inputSchema.required, t.name).toContain('workspace');
          expect(t.inputSchema.properties?.['workspace'], t.name).toMatchObject({ type: 'string' });
        }
      });

      it('list_workspaces: every registered workspace with its holder and states', async () => {
        const r = await call('list_workspaces');
        expect(r.isError).toBeFalsy();
        const ajv = new Ajv({ strict: false });
        const validate = ajv.compile(tools[0]!.outputSchema as Record<string, unknown>);
        expect(validate(r.structuredContent), JSON.stringify(validate.errors)).toBe(true);
        const s = r.structuredContent as unknown as FleetJson;
        expect(s.workers.map((w) => w.id)).toEqual(['w-1']);
        expect(s.workspaces.map((w) => [w.name, w.holder?.worker, w.states])).toEqual([
          ['blog', 'w-1', { converged: 1 }],
          ['shop', 'w-1', { converged: 1 }],
        ]);
      });

      it('status, plan and explain answer for the workspace named, from the shared store', async () => {
        for (const name of NAMES) {
          const status = await call('status', { workspace: name });
          expect(status.isError, JSON.stringify(status.content)).toBeFalsy();
          const s = status.structuredContent as {
            workspace: { name: string };
            resources: { address: string; state: string }[];
            lease: { holder?: { worker?: string } } | null;
          };
          expect(s.workspace.name).toBe(name);
          expect(s.resources.map((x) => [x.address, x.state])).toEqual([
            ['sb.services/api', 'converged'],
          ]);
          const plan = await call('plan', { workspace: name });
          expect(plan.isError, JSON.stringify(plan.content)).toBeFalsy();
          expect(plan.structuredContent).toMatchObject({ workspace: { name }, changes: false });
          const explain = await call('explain', {
            workspace: name,
            target: 'sb.services/api.replicas',
          });
          expect(explain.isError, JSON.stringify(explain.content)).toBeFalsy();
          expect(JSON.stringify(explain.structuredContent)).toContain(`api-${name}`);
        }
      });

      it('refuses an unknown workspace, naming the registered ones', async () => {
        expect(errorText(await call('status', { workspace: 'shpo' }))).toBe(
          'workspace.not_found: no workspace "shpo" is registered in this fleet; the fleet has 2: blog, shop\nhint: name one of them (the list_workspaces tool lists them)',
        );
      });

      it('refuses a call without a workspace, saying what to give', async () => {
        expect(errorText(await call('plan', {}))).toContain(
          'workspace is missing: the registered workspace the call is about (list_workspaces lists them), e.g. "workspace": "shop"',
        );
      });

      it('does not apply a proposal in a fleet (the holder carries out the intent)', async () => {
        const text = errorText(
          await call('propose_change', {
            workspace: 'shop',
            set: [{ address: 'sb.services/api', field: 'replicas', value: 3 }],
            apply: true,
          }),
        );
        expect(text).toMatch(/^propose\.apply_not_in_fleet: tend mcp --fleet does not apply/);
      });

      it('refuses a git workspace as tend serve --fleet does', async () => {
        const added = await tend(['workspace', 'add', 'infra', '--git', join(root, 'no-repo')]);
        expect(added.code, added.stdout + added.stderr).toBe(0);
        expect(errorText(await call('history', { workspace: 'infra' }))).toMatch(
          /^workspace\.git_not_served: workspace infra follows a git repository \(.*no-repo\); tend mcp --fleet serves directory workspaces only/,
        );
        const http = await get('/workspaces/infra/graph');
        expect([
          http.status,
          ((await http.json()) as { error: { code: string } }).error.code,
        ]).toEqual([501, 'workspace.git_not_served']);
        const removed = await tend(['workspace', 'remove', 'infra']);
        expect(removed.code, removed.stdout + removed.stderr).toBe(0);
      });

      it('never shows the store password', () => {
        expect(transcript.length).toBeGreaterThan(5);
        expect(transcript.join('\n')).not.toContain(DB_PASSWORD);
      });
    });

    describe('tend mcp --fleet refusals', () => {
      it('refuses a store that is not PostgreSQL', async () => {
        const dir = mkdtempSync(join(tmpdir(), 'tend-mcp-sqlite-'));
        try {
          const r = await runCli(['mcp', '--fleet', '--store', join(dir, 'tend.db')], {
            env: { TEND_STORE_URL: '' },
          });
          expect(r.code).toBe(1);
          expect(r.stdout).toBe('');
          expect(r.stderr).toContain(
            'error: a workspace registry needs a shared store: --store postgres://… or TEND_STORE_URL',
          );
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });

      it.each([
        [['--allow-apply'], '--allow-apply does not go with --fleet'],
        [['--workspace', 'shop'], '--workspace does not go with it'],
      ])('refuses %j with --fleet', async (flags, message) => {
        const r = await tend(['mcp', '--fleet', ...flags]);
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(message);
        expect(r.stderr).not.toContain(DB_PASSWORD);
      });
    });
  },
);
