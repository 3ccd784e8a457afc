import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ActionRequest } from '../../../app/index.js';
import { defaultContext, runAction } from '../../../app/index.js';
import type { Provider, ResourceTypeInfo } from '../../../core/index.js';
import type { ActionCrashPoint } from '../../../engine/index.js';
import { ACTION_CRASH_POINTS } from '../../../engine/index.js';
import type { PostgresHandle } from '../../../../test/support/postgres.js';
import { POSTGRES, startPostgres } from '../../../../test/support/postgres.js';
import { resolveConnection } from '../connection.js';
import { alterRolePassword, postgresActions } from './rotate-password.js';
import { envFileSink, fileSink } from './secret-sink.js';

// rotate-password against a real PostgreSQL whose TCP logins need passwords (scram-sha-256), so that
// "the old one no longer works" can fail. Run in-process through src/app/action.ts with a minimal
// provider offering `role` (the native provider, built elsewhere, offers it through the same
// `postgresActions`). A crash (a throw at a crash point) at every point of every step, then a resume:
// the sink always holds a password that logs in, and the rotation ends with only the new one working.

const SUPER = 'super-Secret-0123456789';
const OLD = 'Old0password0of0app0role0x';
const STEPS = ['write-pending', 'alter-role', 'promote', 'retire-old'] as const;

const ROLE: ResourceTypeInfo = {
  name: 'role',
  schema: { type: 'object', properties: { name: { type: 'string' } } },
  identity: 'natural-key',
  naturalKey: 'name',
  idField: 'name',
  createOnly: [],
  outputOnly: [],
  sensitive: ['password'],
  lifecycle: 'annotations',
  idempotencyKey: false,
};

class Crash extends Error {}

describe.skipIf(POSTGRES.skip)(`rotate-password on a real PostgreSQL${POSTGRES.note}`, () => {
  let server: PostgresHandle;
  let dir: string;
  const connection = () => resolveConnection({ url: server.url() }, { PGPASSWORD: SUPER });

  const admin = async <T>(sql: string, values: unknown[] = []): Promise<T[]> => {
    const c = new pg.Client(connection().config);
    await c.connect();
    try {
      return (await c.query(sql, values)).rows as T[];
    } finally {
      await c.end();
    }
  };
  const logsIn = async (password: string | undefined, role = 'app'): Promise<boolean> => {
    if (password === undefined) return false;
    const c = new pg.Client({ ...connection().config, user: role, password });
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

  const context = () => {
    const provider: Provider = {
      name: 'pg',
      describe: () => ({ types: [ROLE], auditFeed: false, warnings: [] }),
      list: () => Promise.resolve([]),
      read: () => Promise.resolve(undefined),
      create: () => Promise.reject(new Error('never')),
      update: () => Promise.reject(new Error('never')),
      delete: () => Promise.reject(new Error('never')),
      evaluate: () => Promise.reject(new Error('never')),
      actions: postgresActions({ connection }),
    };
    return defaultContext({
      env: { TEND_LEDGER_KEY: 'k'.repeat(64), TEND_WORKSPACE: 'pgtest' },
      providers: new Map([['openapi', () => Promise.resolve(provider)]]),
      notice: () => {},
    });
  };
  const request = (over: Partial<ActionRequest> = {}): ActionRequest => ({
    dir,
    address: 'pg.role/app',
    action: 'rotate-password',
    params: ['file=secrets/app.pw'],
    lockTimeoutMs: 0,
    ...over,
  });

  beforeAll(async () => {
    server = await startPostgres({ auth: 'scram-sha-256', superPassword: SUPER });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tend-rotate-'));
    writeFileSync(
      join(dir, 'provider.yaml'),
      'kind: Provider\nname: pg\ntype: openapi\nspec: http://127.0.0.1:9/o.json\nendpoint: http://127.0.0.1:9\n',
    );
    writeFileSync(
      join(dir, 'role.yaml'),
      'kind: Resource\ntype: pg.role\nname: app\nspec:\n  name: app\n',
    );
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(dir, 'secrets'));
    writeFileSync(join(dir, 'secrets', 'app.pw'), `${OLD}\n`, { mode: 0o600 });
    await admin('DROP ROLE IF EXISTS app');
    await admin(`CREATE ROLE app LOGIN PASSWORD '${OLD}'`);
    return () => rmSync(dir, { recursive: true, force: true });
  });

  it('rotates: only the new password works, it is in the sink (0600), the old one is forgotten', async () => {
    expect(await logsIn(OLD)).toBe(true);
    const r = await runAction(context(), request());
    expect(r.error).toBeUndefined();
    expect(r.state).toBe('done');
    expect(r.steps.map((s) => [s.name, s.state])).toEqual(STEPS.map((s) => [s, 'settled']));
    const file = join(dir, 'secrets', 'app.pw');
    const now = readFileSync(file, 'utf8').trim();
    expect(now).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await logsIn(now)).toBe(true);
    expect(await logsIn(OLD)).toBe(false);
    expect(await fileSink(file).read()).toEqual({ current: now });
    // The password never reached the store: not the new one, not the old one.
    const db = readFileSync(join(dir, '.tend', 'tend.db'));
    for (const secret of [now, OLD]) expect(db.includes(secret)).toBe(false);
    // The server stores a SCRAM verifier: the password itself was never sent in the statement.
    const [row] = await admin<{ p: string }>(
      "SELECT rolpassword AS p FROM pg_authid WHERE rolname = 'app'",
    );
    expect(row!.p).toMatch(/^SCRAM-SHA-256\$4096:/);
  });

  it('writes to an env file, keeping its other lines', async () => {
    const env = join(dir, 'app.env');
    writeFileSync(env, `# app\nPGHOST=db\nDB_PASSWORD="${OLD}"\n`);
    const r = await runAction(
      context(),
      request({ params: ['envFile=app.env', 'envName=DB_PASSWORD'] }),
    );
    expect(r.state).toBe('done');
    const text = readFileSync(env, 'utf8');
    const m = /^# app\nPGHOST=db\nDB_PASSWORD=([A-Za-z0-9]{32})\n$/.exec(text);
    expect(m).not.toBeNull();
    expect(await logsIn(m![1])).toBe(true);
    expect(await logsIn(OLD)).toBe(false);
    expect(statSync(env).mode & 0o777).toBe(0o600);
    expect(await envFileSink(env, 'DB_PASSWORD').read()).toEqual({ current: m![1] });
  });

  const crashes = STEPS.flatMap((step) => ACTION_CRASH_POINTS.map((point) => ({ step, point })));
  it.each(crashes)(
    'a crash at $point of $step: the sink keeps a working password; the resume ends rotated',
    async ({ step, point }: { step: string; point: ActionCrashPoint }) => {
      const crash = (p: ActionCrashPoint, s: string) => {
        if (p === point && s === step) throw new Crash(`${p}:${s}`);
      };
      await expect(runAction(context(), request({ crash }))).rejects.toBeInstanceOf(Crash);
      const sink = fileSink(join(dir, 'secrets', 'app.pw'));
      const left = await sink.read();
      // Never a locked-out consumer, never a lost secret: current or pending logs in.
      expect((await logsIn(left.current)) || (await logsIn(left.pending))).toBe(true);
      const r = await runAction(context(), request({ params: [] }));
      expect([r.resumed, r.state, r.error]).toEqual([true, 'done', undefined]);
      const end = await sink.read();
      expect(Object.keys(end)).toEqual(['current']);
      expect(await logsIn(end.current)).toBe(true);
      expect(await logsIn(OLD)).toBe(false);
    },
  );

  it('refuses to forget the old password when the server does not check it, keeping it', async () => {
    // trust for app on 127.0.0.1 is beyond this cluster's pg_hba; a role without a password check
    // is simulated by the old password being set back between the steps.
    const crash = (p: ActionCrashPoint, s: string) => {
      if (p === 'settled' && s === 'promote') throw new Crash('x');
    };
    await expect(runAction(context(), request({ crash }))).rejects.toBeInstanceOf(Crash);
    await admin(alterRolePassword('app', OLD));
    const r = await runAction(context(), request({ params: [] }));
    expect(r.state).toBe('failed');
    expect(r.error).toMatch(
      /^retire-old: the old password of app still logs in \(it is kept in .*app\.pw as previous\); the server does not check passwords/,
    );
    expect((await fileSink(join(dir, 'secrets', 'app.pw')).read()).previous).toBe(OLD);
  });

  it.each([
    [
      ['file=a', 'envFile=b'],
      'write-pending: give the secret sink once: --param file=… or --param envFile=…, not both; file holds the password alone; envFile holds a NAME=value line',
    ],
    [
      ['envFile=b', 'envName=1X'],
      'write-pending: envName `1X` is not a variable name; use letters, digits and underscores, not starting with a digit, e.g. DB_PASSWORD',
    ],
    [
      ['file=a', 'length=8'],
      'write-pending: length must be a whole number from 24 to 256, not 8; e.g. --param length=32',
    ],
    [
      [],
      "write-pending: pg.role/app: nowhere to write the new password; pass --param file=<path> or --param envFile=<path> (with envName=…), or declare the role's password as { fromFile: <path> }",
    ],
  ])('fails the first step, changing nothing, for %j', async (params, error) => {
    const r = await runAction(context(), request({ params }));
    expect([r.state, r.error]).toEqual(['failed', error]);
    expect(await logsIn(OLD)).toBe(true);
  });
});
