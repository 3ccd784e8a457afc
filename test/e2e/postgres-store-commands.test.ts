import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { openStore } from '../../src/store/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../support/cli.js';
import { CLI, copyExample, runCli } from '../support/cli.js';
import type { PostgresHandle } from '../support/postgres.js';
import { POSTGRES, startPostgres } from '../support/postgres.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { scaleServiceAs, startSandboxProcess } from '../support/sandbox-process.js';

// Issue 26, item 1: every command that opens a store works on PostgreSQL, through the built CLI, on
// one cluster that asks for a password and one sandbox process. The quickstart is workspace `shop`
// (a Workspace document) with TEND_STORE_URL; a second workspace `roles` (the native PostgreSQL
// provider, a role on the same cluster) runs rotate-password with `--store`. Each step asserts what
// it wrote to or read from the database and the platform. Then a workspace name the store never saw
// is refused by the commands that report what Tend recorded, naming the ones it holds. No SQLite
// file is made; the database password is in no output. With CI=true a missing server fails.
const SECRET = 'pg-commands-e2e-quickstart-secret';
const DB_PASSWORD = 'pg-commands-e2e-db-password-5d2a';
const LEDGER_KEY = 'pg-commands-e2e-ledger-key-0123456789abcdef';
const ROLE_PASSWORD = 'Rolepassword0of0app0rot0x42';
const VIEWER = 'pg-commands-viewer-token-0123456789abcdef';

/** The JSON document at the end of a command's stdout (progress lines may come before it). */
function lastJson<T>(stdout: string): T {
  const at = stdout.lastIndexOf('\n{\n');
  return JSON.parse(at < 0 ? stdout : stdout.slice(at + 1)) as T;
}

describe.skipIf(POSTGRES.skip)(
  `every command on a PostgreSQL store (CLI, real sandbox, real cluster)${POSTGRES.note}`,
  { timeout: 180_000 },
  () => {
    let server: PostgresHandle;
    let sandbox: SandboxHandle;
    let ex: ReturnType<typeof copyExample>;
    let url: string;
    let db: pg.Client;
    const dirs: string[] = [];
    const outputs: CliResult[] = [];
    /** What long-running commands (serve, mcp) printed. */
    const logs: string[] = [];
    const env = (): Record<string, string> => ({
      QUICKSTART_ADMIN_PASSWORD: SECRET,
      TEND_LEDGER_KEY: LEDGER_KEY,
      TEND_STORE_URL: url,
    });
    const tend = async (args: string[], extra: Record<string, string> = {}) => {
      const r = await runCli(args, { env: { ...env(), ...extra } });
      outputs.push(r);
      return r;
    };
    const query = async <T extends object>(sql: string, params: unknown[] = []) =>
      (await db.query<T>(sql, params)).rows;
    const service = async () => (await sandbox.objects()).find((o) => o.type === 'services')!;

    beforeAll(async () => {
      server = await startPostgres({ auth: 'scram-sha-256', superPassword: DB_PASSWORD });
      await server.createDatabase('tend_fleet');
      url = `postgres://postgres:${DB_PASSWORD}@127.0.0.1:${server.port}/tend_fleet`;
      sandbox = await startSandboxProcess();
      ex = copyExample('quickstart', sandbox.url);
      ex.write('workspace.yaml', 'kind: Workspace\nname: shop\n');
      const applied = await tend(['apply', ex.dir, '--yes']);
      expect(applied.code, applied.stdout + applied.stderr).toBe(0);
      db = new pg.Client({ connectionString: url });
      await db.connect();
    }, 180_000);
    afterAll(async () => {
      await db?.end();
      await sandbox?.stop();
      await server?.stop();
      ex?.cleanup();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    it('run --max-passes: puts a hand-made change back, records it under the workspace, releases the lease', async () => {
      expect(await scaleServiceAs(sandbox, 4, 'alice')).toBe(200);
      const r = await tend(['run', ex.dir, '--max-passes', '2', '--interval', '1']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout + r.stderr).toContain('ran 2 passes.');
      expect((await service()).fields['replicas']).toBe(2);
      const seen = await query<{ actor: string }>(
        `SELECT actor FROM tend.changes WHERE workspace = 'shop' AND address = 'sb.services/api'
         AND actor = 'alice'`,
      );
      expect(seen.length).toBeGreaterThan(0);
      expect(await query(`SELECT 1 FROM tend.leases WHERE workspace = 'shop'`)).toEqual([]);
      const states = await query<{ state: string }>(
        `SELECT DISTINCT state FROM tend.statuses WHERE workspace = 'shop'`,
      );
      expect(states).toEqual([{ state: 'converged' }]);
    });

    it('explain and drift read the recorded change and the platform', async () => {
      const explained = await tend(['explain', 'sb.services/api.replicas', ex.dir, '--json']);
      expect(explained.code, explained.stdout + explained.stderr).toBe(0);
      const report = JSON.parse(explained.stdout) as {
        workspace?: { name: string };
        fields: {
          field: string;
          declared: unknown;
          observed: unknown;
          entries: { actor: string }[];
        }[];
      };
      const replicas = report.fields.find((f) => f.field === 'replicas')!;
      expect(replicas).toMatchObject({ observed: 2 });
      expect(replicas.entries.map((e) => e.actor)).toContain('alice');

      const none = await tend(['drift', ex.dir]);
      expect(none.code, none.stdout + none.stderr).toBe(0);
      expect(none.stdout).toContain('workspace shop (intent)');
      expect(await scaleServiceAs(sandbox, 5, 'bob')).toBe(200);
      const drifted = await tend(['drift', ex.dir]);
      expect(drifted.code, drifted.stdout + drifted.stderr).toBe(1);
      expect(drifted.stdout).toContain('~ replicas  declared 2, observed 5');
      expect(drifted.stdout).toContain('changed by bob');
      // drift is read-only: nothing about bob was recorded.
      expect(
        await query(`SELECT 1 FROM tend.changes WHERE workspace = 'shop' AND actor = 'bob'`),
      ).toEqual([]);
    });

    it('accept --write takes the observed value into the intent; apply puts the platform back', async () => {
      const original = ex.read('app.yaml');
      const r = await tend(['accept', 'sb.services/api', 'replicas', ex.dir, '--write']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(ex.read('app.yaml')).toBe(original.replace('  replicas: 2\n', '  replicas: 5\n'));
      const plan = await tend(['plan', ex.dir]);
      expect(plan.code, plan.stdout + plan.stderr).toBe(0);
      ex.write('app.yaml', original);
      const apply = await tend(['apply', ex.dir, '--yes']);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      expect((await service()).fields['replicas']).toBe(2);
    });

    it('announce stores the announcement in the workspace; --list reads it back', async () => {
      const r = await tend([
        'announce',
        'sb.services/api',
        ex.dir,
        '--field',
        'replicas',
        '--value',
        '6',
        '--actor',
        'hpa',
        '--actor-kind',
        'controller',
        '--intent',
        'availability',
        '--motivation',
        'traffic',
      ]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const id = /announced ([0-9a-f]+)/.exec(r.stdout)?.[1];
      expect(id, r.stdout).toBeDefined();
      const stored = await query<{ workspace: string; id: string }>(
        'SELECT workspace, id FROM tend.announcements',
      );
      expect(stored).toEqual([{ workspace: 'shop', id }]);
      const list = await tend(['announce', '--list', ex.dir]);
      expect(list.code, list.stdout + list.stderr).toBe(0);
      expect(list.stdout).toContain(`${id!}  a change of sb.services/api replicas to 6`);
    });

    it('pause and resume store who stopped what in the workspace; status shows it', async () => {
      const paused = await tend(['pause', 'sb.buckets/assets', ex.dir, '--reason', 'audit']);
      expect(paused.code, paused.stdout + paused.stderr).toBe(0);
      const meta = await query<{ value: string }>(
        `SELECT value FROM tend.meta WHERE workspace = 'shop' AND key LIKE 'paused%'`,
      );
      expect(meta).toHaveLength(1);
      expect(JSON.parse(meta[0]!.value)).toMatchObject([
        { address: 'sb.buckets/assets', reason: 'audit' },
      ]);
      const status = await tend(['status', ex.dir]);
      expect(status.stdout).toContain('paused: sb.buckets/assets');
      const resumed = await tend(['resume', 'sb.buckets/assets', ex.dir]);
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      const after = await query<{ value: string }>(
        `SELECT value FROM tend.meta WHERE workspace = 'shop' AND key LIKE 'paused%'`,
      );
      expect(after.map((m) => JSON.parse(m.value) as unknown)).toEqual([[]]);
    });

    it("prune deletes an object carrying the workspace's marker that nothing declares", async () => {
      const made = await fetch(`${sandbox.url}/buckets`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'ghost-bucket',
          versioning: false,
          tags: { 'tend.workspace': 'shop', 'tend.address': 'sb.buckets/ghost' },
        }),
      });
      expect(made.status).toBe(201);
      const r = await tend(['prune', ex.dir, '--yes', '--json']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const report = lastJson<{ verdict: string; result: { deleted: { id: string }[] } }>(r.stdout);
      expect(report.verdict).toBe('ok');
      expect(report.result.deleted.map((d) => d.id)).toEqual(['ghost-bucket']);
      expect((await sandbox.objects()).some((o) => o.id === 'ghost-bucket')).toBe(false);
      const journaled = await query<{ state: string }>(
        `SELECT state FROM tend.operations WHERE workspace = 'shop' AND action = 'delete'
         AND address = 'sb.buckets/ghost'`,
      );
      expect(journaled).toEqual([{ state: 'settled' }]);
    });

    it('import writes intent for a hand-made object and adopts it into the workspace', async () => {
      const made = await fetch(`${sandbox.url}/buckets`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'legacy-logs', versioning: true }),
      });
      expect(made.status).toBe(201);
      const r = await tend(['import', ex.dir, '--provider', 'sb', '--match', 'legacy*']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(ex.read('sb-import.yaml')).toContain('name: legacy-logs');
      expect(
        await query(
          `SELECT object_id FROM tend.twin WHERE workspace = 'shop' AND address = 'sb.buckets/legacy-logs'`,
        ),
      ).toEqual([{ object_id: 'legacy-logs' }]);
      const plan = await tend(['plan', ex.dir]);
      expect(plan.code, plan.stdout + plan.stderr).toBe(0);
      expect(plan.stdout).toContain('No changes.');
    });

    it('ledger checkpoint --out, then verify against it', async () => {
      const file = join(ex.dir, 'checkpoint.json');
      const c = await tend(['ledger', 'checkpoint', ex.dir, '--out', file]);
      expect(c.code, c.stdout + c.stderr).toBe(0);
      const checkpoint = JSON.parse(readFileSync(file, 'utf8')) as {
        workspace: string;
        seq: number;
      };
      const [head] = await query<{ seq: number }>(
        `SELECT seq::int AS seq FROM tend.ledger_heads WHERE workspace = 'shop'`,
      );
      expect(checkpoint).toMatchObject({ workspace: 'shop', seq: head!.seq });
      const v = await tend(['ledger', 'verify', ex.dir, '--checkpoint', file]);
      expect(v.code, v.stdout + v.stderr).toBe(0);
      expect(v.stdout).toContain(`ledger intact: ${head!.seq} entries of workspace shop`);
      expect(v.stdout).toContain(`entry ${head!.seq} matches the checkpoint`);
    });

    it('serve: runs the loop on the store, answers /status, /resources and /history with a token, stops and releases the lease', async () => {
      const child: ChildProcess = spawn(
        process.execPath,
        [CLI, 'serve', ex.dir, '--port', '0', '--log-format', 'json', '--interval', '60'],
        {
          env: {
            ...process.env,
            ...env(),
            NO_COLOR: '1',
            TEND_API_TOKENS: JSON.stringify([{ token: VIEWER, role: 'viewer', name: 'e2e' }]),
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      const lines: string[] = [];
      try {
        const base = await new Promise<string>((resolve, reject) => {
          createInterface({ input: child.stderr! }).on('line', (line) => {
            lines.push(line);
            try {
              const entry = JSON.parse(line) as { kind?: string; url?: string };
              if (entry.kind === 'listening' && entry.url) resolve(entry.url);
            } catch {
              // not JSON
            }
          });
          void exited.then((code) =>
            reject(new Error(`serve exited ${code}: ${lines.join('\n')}`)),
          );
        });
        const get = (path: string) =>
          fetch(`${base}${path}`, { headers: { authorization: `Bearer ${VIEWER}` } });
        // The loop holds the workspace's lease in the database.
        const deadline = Date.now() + 60_000;
        while ((await query(`SELECT 1 FROM tend.leases WHERE workspace = 'shop'`)).length === 0) {
          expect(Date.now() < deadline, lines.join('\n')).toBe(true);
          await new Promise((r) => setTimeout(r, 200));
        }
        const [lease] = await query<{ command: string; pid: number }>(
          `SELECT command, pid FROM tend.leases WHERE workspace = 'shop'`,
        );
        expect(lease).toMatchObject({ pid: child.pid });
        const status = await get('/status');
        expect(status.status).toBe(200);
        const body = (await status.json()) as {
          workspace: { name: string };
          resources: { address: string; state: string }[];
        };
        expect(body.workspace.name).toBe('shop');
        expect(body.resources.find((x) => x.address === 'sb.services/api')?.state).toBe(
          'converged',
        );
        const resource = await get(`/resources/${encodeURIComponent('sb.services/api')}`);
        expect(resource.status).toBe(200);
        expect(await resource.json()).toMatchObject({ address: 'sb.services/api' });
        const history = await get('/history?actor=alice');
        expect(history.status).toBe(200);
        const changes = ((await history.json()) as { changes: { actor: string }[] }).changes;
        expect(changes.length).toBeGreaterThan(0);
        expect(changes.every((c) => c.actor === 'alice')).toBe(true);
        expect((await fetch(`${base}/status`)).status).toBe(401);
      } finally {
        if (child.exitCode === null) child.kill('SIGINT');
        const code = await exited;
        logs.push(out, lines.join('\n'));
        expect(code, lines.slice(-20).join('\n')).toBe(0);
      }
      expect(await query(`SELECT 1 FROM tend.leases WHERE workspace = 'shop'`)).toEqual([]);
    });

    it('mcp over stdio: tools/list, and status and history read from the store', async () => {
      const client = new Client({ name: 'pg-e2e', version: '1.0.0' });
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp', ex.dir],
        env: { ...(process.env as Record<string, string>), ...env() },
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      await client.connect(transport);
      try {
        const tools = (await client.listTools()).tools.map((t) => t.name).sort();
        expect(tools).toEqual([
          'announce',
          'compliance',
          'explain',
          'history',
          'plan',
          'propose_change',
          'status',
        ]);
        const status = (await client.callTool({
          name: 'status',
          arguments: { offline: true },
        })) as CallToolResult;
        expect(status.isError, JSON.stringify(status.content)).toBeFalsy();
        const s = status.structuredContent as {
          workspace: { name: string };
          resources: { address: string; state: string }[];
        };
        expect(s.workspace.name).toBe('shop');
        expect(s.resources.map((x) => x.address)).toContain('sb.buckets/legacy-logs');
        const history = (await client.callTool({
          name: 'history',
          arguments: { actor: 'alice' },
        })) as CallToolResult;
        expect(history.isError, JSON.stringify(history.content)).toBeFalsy();
        const h = history.structuredContent as { changes: { actor: string }[] };
        expect(h.changes.length).toBeGreaterThan(0);
      } finally {
        await client.close();
        logs.push(stderr);
      }
    });

    it('action rotate-password on a role of the same cluster, with --store over TEND_STORE_URL', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tend-pg-roles-'));
      dirs.push(dir);
      mkdirSync(join(dir, 'secrets'), { mode: 0o700 });
      writeFileSync(join(dir, 'secrets', 'app.pw'), `${ROLE_PASSWORD}\n`, { mode: 0o600 });
      writeFileSync(
        join(dir, 'intent.yaml'),
        [
          'kind: Workspace',
          'name: roles',
          '---',
          'kind: Provider',
          'name: pg',
          'type: postgres',
          '---',
          'kind: Resource',
          'type: pg.role',
          'name: app',
          'spec:',
          '  name: app_rot',
          '  login: true',
          '  password: { fromFile: secrets/app.pw }',
          '',
        ].join('\n'),
      );
      // The store from --store (the password from PGPASSWORD); TEND_STORE_URL names nothing usable.
      const extra = {
        TEND_STORE_URL: 'postgres://nobody@127.0.0.1:1/none',
        PGHOST: '127.0.0.1',
        PGPORT: String(server.port),
        PGUSER: 'postgres',
        PGPASSWORD: DB_PASSWORD,
        PGDATABASE: 'postgres',
      };
      const store = `postgres://postgres@127.0.0.1:${server.port}/tend_fleet`;
      const applied = await tend(['apply', dir, '--yes', '--store', store], extra);
      expect(applied.code, applied.stdout + applied.stderr).toBe(0);
      expect(await query(`SELECT object_id FROM tend.twin WHERE workspace = 'roles'`)).toEqual([
        { object_id: 'app_rot' },
      ]);

      const r = await tend(
        ['action', 'pg.role/app', 'rotate-password', dir, '--store', store, '--json'],
        extra,
      );
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ state: 'done' });
      const rotated = readFileSync(join(dir, 'secrets', 'app.pw'), 'utf8').trim();
      expect(rotated).not.toBe(ROLE_PASSWORD);
      const runs = await query<{ workspace: string; action: string; state: string }>(
        'SELECT workspace, action, state FROM tend.action_runs',
      );
      expect(runs).toEqual([{ workspace: 'roles', action: 'rotate-password', state: 'done' }]);
      // The finished run's ledger entry, in the workspace's chain.
      const entries = await query<{ after: string }>(
        `SELECT after FROM tend.changes WHERE workspace = 'roles' AND action = 'update'`,
      );
      expect(entries.map((e) => JSON.parse(e.after) as unknown)).toEqual([
        expect.objectContaining({ action: 'rotate-password', outcome: 'done' }),
      ]);
      // The new password logs in; the old one no longer does.
      const login = async (password: string) => {
        const c = new pg.Client({
          host: '127.0.0.1',
          port: server.port,
          user: 'app_rot',
          password,
          database: 'postgres',
        });
        c.on('error', () => undefined);
        try {
          await c.connect();
          return true;
        } catch {
          return false;
        } finally {
          await c.end().catch(() => undefined);
        }
      };
      expect(await login(rotated)).toBe(true);
      expect(await login(ROLE_PASSWORD)).toBe(false);
      // Neither password reached any output or any table of the store.
      for (const o of outputs) {
        expect(o.stdout + o.stderr).not.toContain(rotated);
        expect(o.stdout + o.stderr).not.toContain(ROLE_PASSWORD);
      }
      const dump = await dumpStore();
      expect(dump).not.toContain(rotated);
      expect(dump).not.toContain(ROLE_PASSWORD);
      expect(existsSync(join(dir, '.tend', 'tend.db'))).toBe(false);
    });

    /** Every row of every table of the store, as text. */
    const dumpStore = async (): Promise<string> => {
      const tables = await query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'tend'",
      );
      let text = '';
      for (const { table_name } of tables) {
        const [row] = await query<{ t: string }>(
          `SELECT coalesce(string_agg(x::text, E'\\n'), '') AS t FROM tend.${table_name} AS x`,
        );
        text += `${row!.t}\n`;
      }
      return text;
    };

    describe('a workspace name the store never saw', () => {
      const typo = ['--workspace', 'shpo'];
      const holds = 'the store holds 2 workspaces: roles, shop';
      const hint = 'hint: name one of them with --workspace <name> (or TEND_WORKSPACE)';

      it('status, history, explain, drift and announce --list refuse it, naming the workspaces the store holds', async () => {
        const cases: [string[], number][] = [
          [['status', ex.dir, ...typo], 1],
          [['history', ex.dir, ...typo], 1],
          [['explain', 'sb.services/api', ex.dir, ...typo], 1],
          [['drift', ex.dir, ...typo], 2],
          [['announce', '--list', ex.dir, ...typo], 1],
        ];
        for (const [args, code] of cases) {
          const r = await tend(args);
          expect(r.code, `${args[0]}: ${r.stdout}${r.stderr}`).toBe(code);
          expect(r.stderr, args[0]).toContain(
            `error: workspace shpo (from --workspace) is not in the store: nothing was ever recorded for it; ${holds}`,
          );
          expect(r.stderr, args[0]).toContain(hint);
        }
        const json = await tend(['status', ex.dir, '--json'], { TEND_WORKSPACE: 'shpo' });
        expect(json.code).toBe(1);
        expect(JSON.parse(json.stdout)).toMatchObject({
          ok: false,
          error: {
            code: 'workspace.not_found',
            message: `workspace shpo (from TEND_WORKSPACE) is not in the store: nothing was ever recorded for it; ${holds}`,
          },
        });
      });

      it('ledger verify and checkpoint refuse it (exit 2, as with no store) instead of "empty, intact"', async () => {
        for (const sub of ['verify', 'checkpoint']) {
          const r = await tend(['ledger', sub, ex.dir, ...typo]);
          expect(r.code, r.stdout + r.stderr).toBe(2);
          expect(r.stdout).not.toContain('intact');
          expect(r.stderr).toContain(
            `error: workspace shpo (from --workspace) is not in the store: nothing was ever recorded for it; ${holds}`,
          );
          expect(r.stderr).toContain(hint);
        }
      });

      it('writers still start a new workspace: plan works on it, and its first write puts it in the store', async () => {
        const plan = await tend(['plan', ex.dir, '--workspace', 'fresh']);
        expect(plan.code, plan.stdout + plan.stderr).toBe(2);
        // A plan writes nothing: the workspace is still unknown to the readers.
        const before = await tend(['history', ex.dir, '--workspace', 'fresh']);
        expect(before.code).toBe(1);
        expect(before.stderr).toContain('workspace fresh (from --workspace) is not in the store');
        const paused = await tend(['pause', 'sb.buckets/assets', ex.dir, '--workspace', 'fresh']);
        expect(paused.code, paused.stdout + paused.stderr).toBe(0);
        const after = await tend(['history', ex.dir, '--workspace', 'fresh']);
        expect(after.code, after.stdout + after.stderr).toBe(0);
        const verify = await tend(['ledger', 'verify', ex.dir, '--workspace', 'fresh']);
        expect(verify.code, verify.stdout + verify.stderr).toBe(0);
        expect(verify.stdout).toContain('ledger intact: 0 entries of workspace fresh');
      });

      it('names at most ten of the workspaces it holds, and how many more', async () => {
        // Nine more workspaces that wrote (fresh is the third): twelve in all. Written through the
        // store itself, in this process: nine CLI runs would only be slower.
        for (let i = 1; i <= 9; i++) {
          const store = await openStore(url, { workspace: `ws-${i}` });
          await store.setMeta('note', 'written by the test');
          await store.close();
        }
        const r = await tend(['status', ex.dir, ...typo]);
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(
          'the store holds 12 workspaces: fresh, roles, shop, ws-1, ws-2, ws-3, ws-4, ws-5, ws-6, ws-7 and 2 more',
        );
      });

      it('on an empty database says so, and how to fill it', async () => {
        await server.createDatabase('tend_empty');
        const empty = `postgres://postgres:${DB_PASSWORD}@127.0.0.1:${server.port}/tend_empty`;
        const r = await tend(['ledger', 'verify', ex.dir], { TEND_STORE_URL: empty });
        expect(r.code).toBe(2);
        expect(r.stderr).toContain(
          "error: workspace shop (from the intent's Workspace document) is not in the store: nothing was ever recorded for it; the store holds no workspace yet",
        );
        expect(r.stderr).toContain(
          'hint: apply the intent first (tend apply), or give the store that holds the workspace (--store or TEND_STORE_URL)',
        );
      });

      it('a SQLite store (one workspace per file) answers as before', async () => {
        const file = join(ex.dir, 'other', 'state.db');
        mkdirSync(join(ex.dir, 'other'));
        const r = await tend(['ledger', 'verify', ex.dir, '--store', file, ...typo]);
        expect(r.code, r.stdout + r.stderr).toBe(2);
        expect(r.stderr).toContain('there is no store at');
        const s = await tend(['status', ex.dir, '--store', file, ...typo]);
        expect(s.code, s.stdout + s.stderr).toBe(0);
        expect(s.stdout).toContain('workspace shpo (flag)');
        expect(s.stdout).toContain('never applied');
        rmSync(join(ex.dir, 'other'), { recursive: true, force: true });
      });
    });

    it('wrote no SQLite store, and printed the database password nowhere', async () => {
      expect(outputs.length).toBeGreaterThan(20);
      expect(existsSync(join(ex.dir, '.tend', 'tend.db'))).toBe(false);
      const local = join(ex.dir, '.tend');
      const files = existsSync(local)
        ? readdirSync(local, { recursive: true, withFileTypes: true })
            .filter((e) => e.isFile())
            .map((e) => join(e.parentPath, e.name))
        : [];
      expect(files.filter((f) => /\.db(-wal|-shm)?$/.test(f))).toEqual([]);
      for (const f of files) expect(readFileSync(f).includes(DB_PASSWORD), f).toBe(false);
      for (const r of outputs) {
        expect(r.stdout + r.stderr).not.toContain(DB_PASSWORD);
        expect(r.stdout + r.stderr).not.toContain(SECRET);
      }
      for (const l of logs) {
        expect(l).not.toContain(DB_PASSWORD);
        expect(l).not.toContain(SECRET);
        expect(l).not.toContain(VIEWER);
      }
      const dump = await dumpStore();
      expect(dump).not.toContain(DB_PASSWORD);
      expect(dump).not.toContain(SECRET);
    });
  },
);
