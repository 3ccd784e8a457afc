// A `tend`-like process for the kill -9 test of rotate-password: runs the action through the built
// application layer (dist/) with a minimal provider offering `role` (the native PostgreSQL provider
// offers it through the same postgresActions), and kills itself with SIGKILL at TEND_ACTION_CRASH_AT.
// Prints the run's report as JSON. Environment: DRIVER_DIR, DRIVER_PG_URL, DRIVER_PG_PASSWORD.
import { actionCrashHookFrom, defaultContext, runAction } from '../../dist/app/index.js';
import { resolveConnection } from '../../dist/providers/postgres/connection.js';
import { postgresActions } from '../../dist/providers/postgres/actions/rotate-password.js';

const env = process.env;
const connection = () =>
  resolveConnection({ url: env.DRIVER_PG_URL }, { PGPASSWORD: env.DRIVER_PG_PASSWORD });
const never = () => Promise.reject(new Error('never'));
const provider = {
  name: 'pg',
  describe: () => ({
    types: [
      {
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
      },
    ],
    auditFeed: false,
    warnings: [],
  }),
  list: () => Promise.resolve([]),
  read: () => Promise.resolve(undefined),
  create: never,
  update: never,
  delete: never,
  evaluate: never,
  actions: postgresActions({ connection }),
};
const ctx = defaultContext({
  env: { TEND_LEDGER_KEY: 'k'.repeat(64), TEND_WORKSPACE: 'pgkill' },
  providers: new Map([['openapi', () => Promise.resolve(provider)]]),
  notice: () => {},
});
const report = await runAction(ctx, {
  dir: env.DRIVER_DIR,
  address: 'pg.role/app',
  action: 'rotate-password',
  params: env.DRIVER_PARAMS ? env.DRIVER_PARAMS.split(' ') : [],
  lockTimeoutMs: 0,
  crash: actionCrashHookFrom(env.TEND_ACTION_CRASH_AT, () => process.kill(process.pid, 'SIGKILL')),
});
process.stdout.write(JSON.stringify(report));
