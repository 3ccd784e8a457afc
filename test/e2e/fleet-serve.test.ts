import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliProcess, CliResult } from '../support/cli.js';
import { runCli, startCli } from '../support/cli.js';
import type { FleetJson } from '../support/fleet.js';
import { MUTATIONS, sleep, sqlRows } from '../support/fleet.js';
import type { PostgresHandle } from '../support/postgres.js';
import { POSTGRES, startPostgres } from '../support/postgres.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// Issue 26 item 5 (docs/fleet.md "The API over the fleet"): the built CLI — one PostgreSQL cluster,
// one sandbox process with a request log, one registered workspace, two `tend worker` processes
// (--no-prune: their loops never delete) and two `tend serve --fleet` nodes, which hold nothing.
// A saved plan that deletes a service is POSTed to node A: the worker holding the workspace carries
// it out once (the sandbox's log shows one DELETE, from the holder's User-Agent), node B reads the
// same job, and an SSE stream opened on node A shows the job and the delete as they happen.
// With CI=true a missing PostgreSQL fails the suite.

const LEDGER_KEY = 'fleet-serve-e2e-ledger-key-0123456789abcdef';
const WS = 'shop';
const TTL_S = 5;

/** The workspace's intent: a Workspace document and services `api-shop` and, when asked, `extra-shop`. */
function intent(sandbox: string, withExtra: boolean): string {
  const service = (name: string) => `---
kind: Resource
type: sb.services
name: ${name}
spec:
  name: ${name}-${WS}
  image: nginx:1.27
  replicas: 1
`;
  return `kind: Workspace
name: ${WS}
---
kind: Provider
name: sb
type: openapi
spec: ${sandbox}/openapi.json
endpoint: ${sandbox}
${service('api')}${withExtra ? service('extra') : ''}`;
}

interface Job {
  id: string;
  state: string;
  worker?: string;
  epoch?: number;
  requestedBy: string;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  result?: { verdict: string; epoch: number; applied: boolean };
  error?: { code: string; message: string };
}

describe.skipIf(POSTGRES.skip)(
  `tend serve --fleet: a write on a node that holds nothing is carried out once by the holder${POSTGRES.note}`,
  () => {
    let server: PostgresHandle;
    let sandbox: SandboxHandle;
    let url: string;
    let root: string;
    const processes: CliProcess[] = [];
    const workers = new Map<string, CliProcess>();
    const nodes: { process: CliProcess; url: string }[] = [];
    const dir = () => join(root, WS);
    const env = () => ({ TEND_STORE_URL: url, TEND_LEDGER_KEY: LEDGER_KEY });
    const tend = (args: string[]): Promise<CliResult> => runCli(args, { env: env() });
    const status = async (): Promise<FleetJson> => {
      const r = await tend(['fleet', 'status', '--json']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      return JSON.parse(r.stdout) as FleetJson;
    };
    const waitFor = async <T>(what: string, ms: number, probe: () => Promise<T | undefined>) => {
      const end = Date.now() + ms;
      for (;;) {
        const v = await probe();
        if (v !== undefined) return v;
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await sleep(250);
      }
    };
    const startNode = async () => {
      const p = startCli(['serve', '--fleet', '--no-auth', '--port', '0', '--log-format', 'json'], {
        env: env(),
      });
      processes.push(p);
      await p.waitFor(/"kind":"listening","url":"[^"]+"/, 60_000);
      const found = /"kind":"listening","url":"([^"]+)"/.exec(p.output())!;
      nodes.push({ process: p, url: found[1]! });
    };

    beforeAll(async () => {
      server = await startPostgres();
      await server.createDatabase('fleet_serve');
      url = server.url('fleet_serve');
      root = mkdtempSync(join(tmpdir(), 'tend-fleet-serve-'));
      sandbox = await startSandboxProcess([], { requestLog: join(root, 'requests.jsonl') });
      mkdirSync(dir());
      writeFileSync(join(dir(), 'intent.yaml'), intent(sandbox.url, true));
      const added = await tend(['workspace', 'add', WS, '--dir', dir()]);
      expect(added.code, added.stdout + added.stderr).toBe(0);
      for (const id of ['w-1', 'w-2']) {
        const w = startCli(
          ['worker', '--id', id, '--interval', '2', '--lease-ttl', String(TTL_S), '--no-prune'],
          { env: env() },
        );
        processes.push(w);
        workers.set(id, w);
      }
      await startNode();
      await startNode();
    }, 180_000);

    afterAll(async () => {
      for (const p of processes) await p.stop('SIGTERM');
      await sandbox?.stop();
      await server?.stop();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    it('answers GET /workspaces on both nodes as tend fleet status --json', async () => {
      const held = await waitFor('the workspace converged', 90_000, async () => {
        const s = await status();
        const w = s.workspaces[0]!;
        return w.holder && w.states['converged'] === 2 ? s : undefined;
      });
      for (const node of nodes) {
        const r = await fetch(`${node.url}/workspaces`);
        expect(r.status).toBe(200);
        const body = (await r.json()) as FleetJson;
        expect(body.workspaces.map((w) => [w.name, w.holder?.worker, w.epoch])).toEqual(
          held.workspaces.map((w) => [w.name, w.holder?.worker, w.epoch]),
        );
      }
      const unknown = await fetch(`${nodes[1]!.url}/workspaces/nope/graph`);
      expect(unknown.status).toBe(404);
      expect(((await unknown.json()) as { error: { message: string } }).error.message).toBe(
        'no workspace nope is registered in this fleet',
      );
    }, 120_000);

    it('POST /workspaces/shop/apply on node A: the holder carries the plan out once; node B reads the job; SSE on A shows it', async () => {
      const a = nodes[0]!;
      const b = nodes[1]!;
      // The intent drops `extra`: the workers (--no-prune) leave it; only a saved plan deletes it.
      writeFileSync(join(dir(), 'intent.yaml'), intent(sandbox.url, false));
      // Two passes of the holder, for its run to follow the new intent.
      await sleep(6_000);
      expect((await sandbox.objects()).filter((o) => o.type === 'services')).toHaveLength(2);
      // The holder now: the second worker to register may have been given the workspace by the
      // rebalance since it converged (CI saw w-2 take it, then release it to w-1 two seconds later).
      const holder = (await status()).workspaces[0]!.holder!.worker!;
      const other = [...workers.keys()].find((id) => id !== holder)!;

      // An SSE stream on node A, from now on.
      const events: { event: string; data: Record<string, unknown> }[] = [];
      const sse = new AbortController();
      const stream = await fetch(`${a.url}/workspaces/${WS}/events`, { signal: sse.signal });
      expect(stream.status).toBe(200);
      const reading = (async () => {
        const reader = stream.body!.getReader();
        const decoder = new TextDecoder();
        let text = '';
        for (;;) {
          const { value, done } = await reader
            .read()
            .catch(() => ({ value: undefined, done: true }));
          if (done) return;
          text += decoder.decode(value);
          let end: number;
          while ((end = text.indexOf('\n\n')) >= 0) {
            const block = text.slice(0, end);
            text = text.slice(end + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (event && data)
              events.push({ event, data: JSON.parse(data) as Record<string, unknown> });
          }
        }
      })();

      const planned = await fetch(`${a.url}/workspaces/${WS}/plan`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(planned.status, await planned.clone().text()).toBe(201);
      const plan = (await planned.json()) as {
        id: string;
        steps: { kind: string; address: string }[];
        destructive: string[];
      };
      expect(plan.steps.filter((s) => s.kind !== 'noop').map((s) => [s.kind, s.address])).toEqual([
        ['delete', 'sb.services/extra'],
      ]);
      expect(plan.destructive).toEqual(['sb.services/extra']);

      const startedAt = new Date().toISOString();
      const posted = await fetch(`${a.url}/workspaces/${WS}/apply?wait=60`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ plan: plan.id, approveDestroy: true }),
      });
      const job = (await posted.json()) as Job;
      expect(posted.status, JSON.stringify(job)).toBe(200);
      expect(posted.headers.get('location')).toBe(`/workspaces/${WS}/jobs/${job.id}`);
      expect(job).toMatchObject({ state: 'done', worker: holder, requestedBy: 'api' });
      expect(job.result).toMatchObject({ verdict: 'ok', applied: true, epoch: job.epoch });
      const at = (iso?: string) => Date.parse(iso ?? '');
      console.log(
        `fleet job: claimed ${at(job.startedAt) - at(job.createdAt)} ms after it was queued, done ${at(job.finishedAt) - at(job.startedAt)} ms later (database time)`,
      );

      // Node B: the same job from the shared store.
      const polled = await fetch(`${b.url}/workspaces/${WS}/jobs/${job.id}`);
      expect(polled.status).toBe(200);
      expect(await polled.json()).toEqual(job);

      // The platform saw the delete once, from the holder; nothing from the other worker.
      await sleep(4_000);
      const mutations = sandbox
        .requests()
        .filter((r) => MUTATIONS.has(r.method) && r.time >= startedAt);
      expect(
        mutations.map((r) => r.method),
        JSON.stringify(mutations),
      ).toEqual(['DELETE']);
      expect(mutations[0]!.userAgent).toContain(`worker ${holder};`);
      // Since the job was asked for: the other worker may have held the workspace before (its first
      // pass created the services) when it started first and gave it up to rebalance.
      expect(
        sandbox
          .requests()
          .filter(
            (r) =>
              r.time >= startedAt &&
              r.userAgent?.includes(`worker ${other};`) &&
              MUTATIONS.has(r.method),
          ),
      ).toEqual([]);
      expect((await sandbox.objects()).filter((o) => o.type === 'services')).toHaveLength(1);
      const rows = await sqlRows<{ id: string; state: string; epoch: number; worker: string }>(
        url,
        'SELECT id, state, epoch, worker FROM tend.jobs',
      );
      expect(rows).toEqual([{ id: job.id, state: 'done', epoch: job.epoch, worker: holder }]);

      // SSE on node A: the job's states and the delete, from the holder; then its loop's passes.
      await waitFor('a pass after the job on the stream', 20_000, () =>
        Promise.resolve(
          events.some((e) => e.event === 'pass-done' && e.data['worker'] === holder) &&
            events.some((e) => e.event === 'job' && e.data['state'] === 'done')
            ? true
            : undefined,
        ),
      );
      sse.abort();
      await reading;
      const jobStates = events.filter((e) => e.event === 'job').map((e) => e.data['state']);
      expect(jobStates).toEqual(['running', 'done']);
      const deleted = events.find((e) => e.event === 'op-done' && e.data['action'] === 'delete');
      expect(deleted?.data).toMatchObject({ address: 'sb.services/extra', worker: holder });
      expect(
        events.every((e) => e.data['worker'] === undefined || e.data['worker'] === holder),
      ).toBe(true);
    }, 180_000);

    it('refuses tend serve --fleet on a SQLite store, saying what to give', async () => {
      const r = await runCli([
        'serve',
        '--fleet',
        '--no-auth',
        '--port',
        '0',
        '--store',
        join(root, 'x.db'),
      ]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        'a workspace registry needs a shared store: --store postgres://… or TEND_STORE_URL',
      );
    });
  },
);
