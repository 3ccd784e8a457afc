import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExample, runCli } from '../support/cli.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { scaleServiceAs, startSandboxInProcess } from '../support/sandbox-process.js';

// `tend serve` over a real port (issue 15, items 1 and 4), as a user runs it: the built CLI on the
// quickstart against a sandbox, tokens from TEND_API_TOKENS, JSON logs on stderr. The loop converges
// the workspace; an on-call change on the platform reaches an SSE client as an event; /metrics shows
// the listed series after the passes; no log line carries a token or a secret; Ctrl-C stops it
// cleanly with the lease released. The loop runs with --no-follow: an edit of the intent takes effect
// through a saved plan, so the test's edit, its plan and its apply never race the loop (issue 25,
// item 8: a loop that followed the edit applied it before POST /plan, whose step was then a noop).
// Build first (`npm run build`).

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const PASSWORD = 'serve-e2e-admin-password';
const VIEWER = 'viewer-e2e-token-0123456789abcdef';
const ADMIN = 'admin-e2e-token-0123456789abcdef';
const TOKENS = JSON.stringify([
  { token: VIEWER, role: 'viewer', name: 'grafana' },
  { tokenFromEnv: 'E2E_ADMIN_TOKEN', role: 'admin', name: 'ops' },
]);

let sandbox: SandboxHandle;
let ex: ReturnType<typeof copyExample>;
let child: ChildProcess;
let exited: Promise<number | null>;
let url: string;
const logLines: string[] = [];

const get = (path: string, token?: string) =>
  fetch(`${url}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  ms = 60_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for ${what}; the log ends:\n${logLines
          .filter((l) => !l.includes('"route":"/status"'))
          .slice(-25)
          .join('\n')}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  sandbox = await startSandboxInProcess({ port: 0 });
  ex = copyExample('quickstart', sandbox.url);
  child = spawn(
    process.execPath,
    [
      CLI,
      'serve',
      ex.dir,
      '--port',
      '0',
      '--log-format',
      'json',
      '--interval',
      '60',
      '--no-follow',
    ],
    {
      env: {
        ...process.env,
        NO_COLOR: '1',
        QUICKSTART_ADMIN_PASSWORD: PASSWORD,
        TEND_API_TOKENS: TOKENS,
        E2E_ADMIN_TOKEN: ADMIN,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  const lines = createInterface({ input: child.stderr! });
  url = await new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      logLines.push(line);
      try {
        const entry = JSON.parse(line) as { kind?: string; url?: string };
        if (entry.kind === 'listening' && entry.url) resolve(entry.url);
      } catch {
        // not JSON: checked by the test on logs
      }
    });
    void exited.then((code) =>
      reject(new Error(`tend serve exited ${code}: ${logLines.join('\n')}`)),
    );
  });
}, 60_000);

afterAll(async () => {
  if (child.exitCode === null) child.kill('SIGKILL');
  await sandbox.stop();
  ex.cleanup();
});

describe('tend serve on a real port', { timeout: 120_000 }, () => {
  it('answers /healthz without a token and nothing else', async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await get('/healthz')).status).toBe(200);
    const denied = await get('/status');
    expect(denied.status).toBe(401);
    expect(await denied.json()).toMatchObject({ error: { code: 'auth.unauthorized' } });
    expect((await get('/status', 'a-token-nobody-configured')).status).toBe(401);
    expect((await get('/status', VIEWER)).status).toBe(200);
  });

  it('streams the events of a change made on the platform, and /metrics shows the series', async () => {
    // The loop converges the workspace first.
    await until('a converged workspace', async () => {
      const s = (await (await get('/status', VIEWER)).json()) as {
        resources: { state: string }[];
      };
      return s.resources.every((r) => r.state === 'converged') ? true : undefined;
    });
    const events = await fetch(`${url}/events`, { headers: { authorization: `Bearer ${VIEWER}` } });
    expect(events.headers.get('content-type')).toContain('text/event-stream');
    const reader = events.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('event: ready')) text += (await reader.read()).value ?? '';

    expect(await scaleServiceAs(sandbox, 9, 'alice', 'human')).toBe(200);
    while (!/event: pass-done\n/.test(text.slice(text.indexOf('event: change-observed')))) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    await reader.cancel();
    expect(text).toMatch(/event: change-observed\ndata: .*"actor":"alice"/);

    const metrics = await get('/metrics', VIEWER);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    const m = await metrics.text();
    for (const series of [
      /^tend_pass_duration_seconds_count [1-9]/m,
      /^tend_event_to_decision_seconds_count [1-9]/m,
      /^tend_drift_total\{actor_kind="human"\} [1-9]/m,
      /^tend_decisions_total\{decision="enforce",actor_kind="human"\} 1$/m,
      /^tend_journal_backlog 0$/m,
      /^tend_api_calls_total\{provider="sb",method="GET",status="200"\} [1-9]/m,
      /^tend_api_calls_total\{provider="sb",method="PATCH",status="200"\} [1-9]/m,
      /^tend_resources\{state="converged"\} 5$/m,
      /^tend_http_requests_total\{method="GET",route="\/status",status="401"\} [1-9]/m,
    ]) {
      expect(m).toMatch(series);
    }
    expect((await get('/metrics')).status).toBe(401);
  });

  it('applies a saved plan while the loop runs (the loop steps aside for it, then resumes)', async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const replicas = async () =>
      (await sandbox.objects()).find((o) => o.type === 'services')!.fields['replicas'];
    ex.write('app.yaml', ex.read('app.yaml').replace('replicas: 2', 'replicas: 3'));
    const planned = (await (await post('/plan', {})).json()) as {
      id: string;
      steps: { address: string; kind: string }[];
    };
    expect(planned.steps.find((s) => s.address === 'sb.services/api')?.kind).toBe('update');
    // The loop (--no-follow) left the edit to the saved plan: nothing was sent for it.
    expect(await replicas()).toBe(2);
    const applied = await post('/apply', { plan: planned.id });
    const report = (await applied.json()) as { verdict: string; epoch: number };
    expect(applied.status, JSON.stringify(report)).toBe(200);
    expect(report.verdict, JSON.stringify(report)).toBe('ok');
    expect(await replicas()).toBe(3);
    // The loop never loaded the edit itself: it stepped aside for the apply, and resumes with it.
    expect(logLines.some((l) => l.includes('"kind":"intent-reloaded"'))).toBe(false);
    await until('the loop holding the lease again', async () => {
      const s = (await (await get('/status', VIEWER)).json()) as {
        lease?: { holder: { command: string } };
      };
      return s.lease?.holder.command === 'tend run' ? true : undefined;
    });
  });

  it('logs one JSON object per line, never a token or a secret', () => {
    const entries = logLines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries.some((e) => e['kind'] === 'request' && e['caller'] === 'grafana')).toBe(true);
    expect(entries.some((e) => e['log'] === 'event')).toBe(true);
    const all = logLines.join('\n');
    for (const secret of [VIEWER, ADMIN, PASSWORD]) expect(all).not.toContain(secret);
  });

  it('Ctrl-C stops it cleanly and releases the workspace', async () => {
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(logLines.at(-1)).toContain('"kind":"stopped"');
    const s = await runCli(['status', ex.dir, '--offline', '--json'], {
      env: { QUICKSTART_ADMIN_PASSWORD: PASSWORD },
    });
    expect(s.code, s.stderr).toBe(0);
    expect(JSON.parse(s.stdout)).not.toHaveProperty('lease');
  });
});

describe('tend serve refuses to start unprotected', { timeout: 60_000 }, () => {
  const cases = [
    {
      name: 'no token configured',
      args: [],
      message: 'error: no API token is configured: nobody could call the API',
    },
    {
      name: '--no-auth on an address others reach',
      args: ['--no-auth', '--listen', '0.0.0.0'],
      message: 'error: --no-auth serves the API to anyone who reaches 0.0.0.0',
    },
    {
      name: 'a token file with problems',
      args: ['--tokens', '/nonexistent/tokens.yaml'],
      message: 'error: cannot read /nonexistent/tokens.yaml',
    },
  ];
  it.each(cases)('$name: exit 1, saying what to do', async ({ args, message }) => {
    const r = await runCli(['serve', ex.dir, '--port', '0', ...args], {
      env: { TEND_API_TOKENS: '', QUICKSTART_ADMIN_PASSWORD: PASSWORD },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(message);
  });
});
