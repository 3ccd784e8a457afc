// rotate-password survives a real kill -9 at every crash point of every step: a process running the
// action (test/support/rotate-driver.mjs, on the built dist/) SIGKILLs itself there; then the sink
// must hold a password that logs in, and running the action again (a new process, which takes over
// the dead one's lease) resumes the run and ends with only the new password working.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConnection } from '../../src/providers/postgres/connection.js';
import { fileSink } from '../../src/providers/postgres/actions/secret-sink.js';
import type { PostgresHandle } from '../support/postgres.js';
import { POSTGRES, startPostgres } from '../support/postgres.js';

const DRIVER = resolve(import.meta.dirname, '..', 'support', 'rotate-driver.mjs');
const SUPER = 'super-Secret-0123456789';
const OLD = 'Old0password0of0app0role0x';
const STEPS = ['write-pending', 'alter-role', 'promote', 'retire-old'];
const POINTS = ['started', 'ran', 'settled'];

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function drive(env: Record<string, string>): Promise<Ran> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [DRIVER], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code, signal) => done({ code, signal, stdout, stderr }));
  });
}

describe.skipIf(POSTGRES.skip)(`rotate-password under kill -9${POSTGRES.note}`, () => {
  let server: PostgresHandle;
  const connection = () => resolveConnection({ url: server.url() }, { PGPASSWORD: SUPER });
  const admin = async (sql: string) => {
    const c = new pg.Client(connection().config);
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  const logsIn = async (password: string | undefined): Promise<boolean> => {
    if (password === undefined) return false;
    const c = new pg.Client({ ...connection().config, user: 'app', password });
    c.on('error', () => {});
    try {
      await c.connect();
      return true;
    } catch (e) {
      if ((e as { code?: string }).code === '28P01') return false;
      throw e;
    } finally {
      await c.end().catch(() => undefined);
    }
  };

  beforeAll(async () => {
    server = await startPostgres({ auth: 'scram-sha-256', superPassword: SUPER });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  const cases = STEPS.flatMap((step) => POINTS.map((point) => ({ step, point })));
  it.each(cases)(
    'kill -9 at $point of $step, then a new process resumes and finishes the rotation',
    async ({ step, point }) => {
      const dir = mkdtempSync(join(tmpdir(), 'tend-rotate-kill-'));
      try {
        writeFileSync(
          join(dir, 'provider.yaml'),
          'kind: Provider\nname: pg\ntype: openapi\nspec: http://127.0.0.1:9/o.json\nendpoint: http://127.0.0.1:9\n',
        );
        writeFileSync(
          join(dir, 'role.yaml'),
          'kind: Resource\ntype: pg.role\nname: app\nspec:\n  name: app\n',
        );
        mkdirSync(join(dir, 'secrets'));
        const file = join(dir, 'secrets', 'app.pw');
        writeFileSync(file, `${OLD}\n`, { mode: 0o600 });
        await admin('DROP ROLE IF EXISTS app');
        await admin(`CREATE ROLE app LOGIN PASSWORD '${OLD}'`);
        const env = {
          DRIVER_DIR: dir,
          DRIVER_PG_URL: server.url(),
          DRIVER_PG_PASSWORD: SUPER,
          DRIVER_PARAMS: 'file=secrets/app.pw',
        };
        const killed = await drive({ ...env, TEND_ACTION_CRASH_AT: `${point}:${step}` });
        expect(killed.signal, killed.stderr).toBe('SIGKILL');
        const left = await fileSink(file).read();
        expect((await logsIn(left.current)) || (await logsIn(left.pending))).toBe(true);
        const resumed = await drive({ ...env, DRIVER_PARAMS: '' });
        expect(resumed.code, resumed.stderr).toBe(0);
        const report = JSON.parse(resumed.stdout) as { resumed: boolean; state: string };
        expect([report.resumed, report.state]).toEqual([true, 'done']);
        const end = await fileSink(file).read();
        expect(Object.keys(end)).toEqual(['current']);
        expect(await logsIn(end.current)).toBe(true);
        expect(await logsIn(OLD)).toBe(false);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
