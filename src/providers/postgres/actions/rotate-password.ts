import { isAbsolute, resolve } from 'node:path';
import pg from 'pg';
import type { ActionContext, ActionDefinition, StepReport } from '../../../core/index.js';
import { ownValue, TendError } from '../../../core/index.js';
import type { PgConnection } from '../connection.js';
import { describeConnection } from '../connection.js';
import { generateSecret, MIN_SECRET_LENGTH, scramVerifier } from './generate-secret.js';
import type { SecretSink } from './secret-sink.js';
import { envFileSink, fileSink, validEnvName } from './secret-sink.js';

/** What the action needs from the provider that offers it: the administrative connection. */
export interface RotatePasswordOptions {
  /** The provider's connection (a role allowed to ALTER ROLE), resolved when the action runs. */
  readonly connection: () => PgConnection;
}

/** The PostgreSQL error a login with a wrong password gets (`invalid_password`). */
const INVALID_PASSWORD = '28P01';

function bad(code: string, message: string, hint: string): TendError {
  return new TendError(code, message, { phase: 'apply', hint });
}

/** The role the action rotates: `--param role`, else the declared `name`, else Tend's object id. */
function roleOf(ctx: ActionContext): string {
  const declared = ownValue(ctx.spec, 'name');
  const role =
    ctx.params['role'] ?? (typeof declared === 'string' ? declared : undefined) ?? ctx.objectId;
  if (role === undefined || role === '') {
    throw bad(
      'action.no_role',
      `${ctx.address} names no role`,
      'declare the role with a name, or pass --param role=<name>',
    );
  }
  return role;
}

/**
 * Where the new password goes: `--param file=` (the password alone in a file) or `--param envFile=`
 * (a `NAME=value` line, NAME from `--param envName=`, default PGPASSWORD); else the file the role's
 * declaration reads its password from (`password: { fromFile: … }`). Paths are relative to the
 * intent directory.
 */
export function sinkOf(ctx: ActionContext): SecretSink {
  const at = (p: string) => (isAbsolute(p) ? p : resolve(ctx.dir, p));
  const file = ctx.params['file'];
  const envFile = ctx.params['envFile'];
  if (file !== undefined && envFile !== undefined) {
    throw bad(
      'action.invalid_params',
      'give the secret sink once: --param file=… or --param envFile=…, not both',
      'file holds the password alone; envFile holds a NAME=value line',
    );
  }
  if (envFile !== undefined) {
    const name = ctx.params['envName'] ?? 'PGPASSWORD';
    if (!validEnvName(name)) {
      throw bad(
        'action.invalid_params',
        `envName \`${name}\` is not a variable name`,
        'use letters, digits and underscores, not starting with a digit, e.g. DB_PASSWORD',
      );
    }
    return envFileSink(at(envFile), name);
  }
  if (file !== undefined) return fileSink(at(file));
  const password = ownValue(ctx.spec, 'password');
  const fromFile =
    password !== null && typeof password === 'object' ? ownValue(password, 'fromFile') : undefined;
  if (typeof fromFile === 'string') return fileSink(at(fromFile));
  throw bad(
    'action.no_sink',
    `${ctx.address}: nowhere to write the new password`,
    "pass --param file=<path> or --param envFile=<path> (with envName=…), or declare the role's password as { fromFile: <path> }",
  );
}

/** Quotes for ALTER ROLE (which takes no parameters): identifier and literal escaped by `pg`. */
export function alterRolePassword(role: string, verifier: string): string {
  return `ALTER ROLE ${pg.escapeIdentifier(role)} PASSWORD ${pg.escapeLiteral(verifier)}`;
}

/**
 * Whether `role` can log in with `password` over the provider's connection (host, port, TLS) to
 * `database`: true, false when the server refuses the password, and a thrown error when it cannot
 * tell (unreachable, role without LOGIN): a verification never guesses.
 */
async function canLogin(
  admin: PgConnection,
  role: string,
  password: string,
  database: string,
): Promise<boolean> {
  const client = new pg.Client({
    ...admin.config,
    user: role,
    password,
    database,
    application_name: 'tend-rotate-password',
  });
  // An error event after connect (the server going away) must not crash the process.
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch (e) {
    if ((e as { code?: string }).code === INVALID_PASSWORD) return false;
    throw new TendError(
      'action.login_unknown',
      `cannot tell whether ${role} logs in at ${describeConnection({ ...admin.summary, user: role, database })}: ${(e as Error).message}`,
      {
        phase: 'verify',
        retryable: true,
        hint: 'is the server reachable, and does the role have LOGIN?',
      },
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * `rotate-password` on a PostgreSQL role, as a durable workflow (docs/actions.md):
 * 1. `write-pending`: a new password (crypto random, letters and digits) is written to the sink as
 *    the pending value — or the pending value an interrupted rotation left is kept;
 * 2. `alter-role`: `ALTER ROLE … PASSWORD` with the SCRAM verifier of the pending value (the password
 *    itself never reaches the server or its logs); verified by logging in with it;
 * 3. `promote`: the pending value becomes current, the old one is kept as previous; verified by
 *    logging in with the current value;
 * 4. `retire-old`: a login with the previous value must be refused, then it is forgotten.
 * At every instant the sink holds a password that works (current, or pending between steps 2 and 3),
 * so a kill -9 anywhere and a resume never lock the consumer out nor lose the secret.
 */
export function rotatePasswordAction(options: RotatePasswordOptions): ActionDefinition {
  const admin = () => options.connection();
  const database = (ctx: ActionContext) => ctx.params['database'] ?? admin().summary.database;
  /** The sink's values, each registered as a secret before anything could print it. */
  const values = async (ctx: ActionContext) => {
    const v = await sinkOf(ctx).read();
    for (const s of [v.current, v.pending, v.previous]) if (s !== undefined) ctx.secrets.add(s);
    return v;
  };
  const login = (ctx: ActionContext, password: string) =>
    canLogin(admin(), roleOf(ctx), password, database(ctx));
  const report = (ok: boolean, message: string): StepReport => ({ ok, message });
  return {
    name: 'rotate-password',
    description:
      "replace the role's password with a new random one, written to the secret sink first, never locking a consumer out",
    params: [
      {
        name: 'file',
        description:
          "the file the consumer reads the password from (mode 0600); default: the role's password fromFile",
      },
      { name: 'envFile', description: 'or an env file holding a NAME=value line' },
      { name: 'envName', description: 'the variable in envFile', default: 'PGPASSWORD' },
      { name: 'length', description: 'characters of the new password', default: '32' },
      {
        name: 'database',
        description: "the database the login checks connect to (default: the provider's)",
      },
      { name: 'role', description: "the role's name (default: the declared name)" },
    ],
    changes: ['password'],
    steps: [
      {
        name: 'write-pending',
        description: 'generate a new password and write it to the sink as the pending value',
        async run(ctx) {
          const length = Number(ctx.params['length'] ?? '32');
          if (!Number.isInteger(length) || length < MIN_SECRET_LENGTH || length > 256) {
            throw bad(
              'action.invalid_params',
              `length must be a whole number from ${MIN_SECRET_LENGTH} to 256, not ${ctx.params['length']}`,
              'e.g. --param length=32',
            );
          }
          roleOf(ctx);
          const sink = sinkOf(ctx);
          const v = await values(ctx);
          if (v.pending !== undefined) {
            return `kept the pending password an interrupted rotation left in ${sink.where}`;
          }
          const secret = generateSecret(length);
          ctx.secrets.add(secret);
          await sink.setPending(secret);
          return `wrote a new ${length}-character password to ${sink.where} as pending`;
        },
        async verify(ctx) {
          const v = await values(ctx);
          return report(v.pending !== undefined, `${sinkOf(ctx).where} holds a pending password`);
        },
      },
      {
        name: 'alter-role',
        description:
          "set the role's password to the pending value (ALTER ROLE, as a SCRAM verifier)",
        async run(ctx) {
          const { pending } = await values(ctx);
          if (pending === undefined) {
            throw bad(
              'action.sink_changed',
              `${sinkOf(ctx).where} lost its pending password`,
              'run the action again: it starts a new rotation',
            );
          }
          const role = roleOf(ctx);
          const client = new pg.Client(admin().config);
          client.on('error', () => {});
          try {
            await client.connect();
            ctx.fence?.();
            await client.query(alterRolePassword(role, scramVerifier(pending)));
          } finally {
            await client.end().catch(() => undefined);
          }
          return `ALTER ROLE ${pg.escapeIdentifier(role)} PASSWORD (a SCRAM-SHA-256 verifier)`;
        },
        async verify(ctx) {
          const { pending, current } = await values(ctx);
          // Resumed after `promote` began: the new password may already be current.
          const candidate = pending ?? current;
          if (candidate === undefined) return report(false, 'the sink holds no password');
          const ok = await login(ctx, candidate);
          return report(
            ok,
            ok ? 'a login with the new password works' : 'the server refuses the new password',
          );
        },
      },
      {
        name: 'promote',
        description: 'make the pending value current in the sink, keeping the old one as previous',
        async run(ctx) {
          const sink = sinkOf(ctx);
          await sink.promote();
          return `the new password is current in ${sink.where}`;
        },
        async verify(ctx) {
          const v = await values(ctx);
          if (v.pending !== undefined)
            return report(false, 'the sink still holds a pending password');
          if (v.current === undefined) return report(false, 'the sink holds no current password');
          const ok = await login(ctx, v.current);
          return report(
            ok,
            ok
              ? 'a login with the current password works'
              : 'the server refuses the current password',
          );
        },
      },
      {
        name: 'retire-old',
        description: 'check that the old password no longer logs in, then forget it',
        async run(ctx) {
          const sink = sinkOf(ctx);
          const { previous, current } = await values(ctx);
          if (previous === undefined || previous === current) {
            return 'no old password in the sink to check';
          }
          if (await login(ctx, previous)) {
            throw bad(
              'action.old_password_works',
              `the old password of ${roleOf(ctx)} still logs in (it is kept in ${sink.where} as previous)`,
              'the server does not check passwords on this connection (pg_hba.conf trust?): require scram-sha-256 for it, then run the action again',
            );
          }
          await sink.dropPrevious();
          return 'the server refuses the old password; it is forgotten';
        },
        async verify(ctx) {
          const { previous } = await values(ctx);
          return report(previous === undefined, 'the sink keeps no old password');
        },
      },
    ],
  };
}

/**
 * The actions of the PostgreSQL provider's types, for `Provider.actions`: `rotate-password` on
 * `role`. The provider passes its own connection.
 */
export function postgresActions(
  options: RotatePasswordOptions,
): (type: string) => readonly ActionDefinition[] {
  const rotate = rotatePasswordAction(options);
  return (type) => (type === 'role' ? [rotate] : []);
}
