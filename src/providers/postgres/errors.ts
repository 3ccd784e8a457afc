// What a PostgreSQL failure means to Tend: a TendError whose `retryable` says whether trying again
// may help (a lost connection, a lock or statement timeout, a database in use) and whose
// `outcomeUnknown` says a mutation may have been applied (the connection went away while a
// statement or its COMMIT was in flight: the journal then looks the object up).
import { TendError } from '../../core/index.js';

/** SQLSTATEs with a meaning of their own. */
const KNOWN: Readonly<Record<string, { code: string; retryable: boolean; hint: string }>> = {
  '55P03': {
    code: 'postgres.lock_timeout',
    retryable: true,
    hint: 'another session holds a lock on the object (see pg_locks); the next pass tries again — raise lockTimeoutMs if it keeps happening',
  },
  '57014': {
    code: 'postgres.statement_timeout',
    retryable: true,
    hint: 'the statement ran longer than statementTimeoutMs; the next pass tries again',
  },
  '55006': {
    code: 'postgres.object_in_use',
    retryable: true,
    hint: 'other sessions are connected to the database; end them (pg_terminate_backend) first',
  },
  '40001': {
    code: 'postgres.serialization',
    retryable: true,
    hint: 'a concurrent change; retried',
  },
  '40P01': { code: 'postgres.deadlock', retryable: true, hint: 'a concurrent change; retried' },
  '42501': {
    code: 'postgres.permission_denied',
    retryable: false,
    hint: "the provider's connection role lacks the privilege: connect as a role with CREATEROLE/CREATEDB or the object's owner",
  },
  '2BP01': {
    code: 'postgres.dependent_objects',
    retryable: false,
    hint: 'other objects depend on it: remove or reassign them first (Tend never cascades a drop)',
  },
  '42710': {
    code: 'postgres.already_exists',
    retryable: false,
    hint: 'an object with this name already exists: import it (`tend import`) or choose another name',
  },
  '42P04': {
    code: 'postgres.already_exists',
    retryable: false,
    hint: 'a database with this name already exists: import it or choose another name',
  },
  '42P06': {
    code: 'postgres.already_exists',
    retryable: false,
    hint: 'a schema with this name already exists: import it or choose another name',
  },
  '42704': {
    code: 'postgres.undefined_object',
    retryable: false,
    hint: 'a role, extension or other object it names does not exist: declare it, or fix the name',
  },
  '3D000': {
    code: 'postgres.undefined_database',
    retryable: false,
    hint: 'the database does not exist: declare it or fix the name',
  },
  '3F000': {
    code: 'postgres.undefined_schema',
    retryable: false,
    hint: 'the schema does not exist: declare it or fix the name',
  },
  '22023': {
    code: 'postgres.invalid_parameter',
    retryable: false,
    hint: 'PostgreSQL refused a value (an encoding or locale it does not know, an extension version it does not ship)',
  },
  '0A000': {
    code: 'postgres.not_supported',
    retryable: false,
    hint: 'PostgreSQL does not support this change',
  },
};

/** Classes of SQLSTATE where the connection or the server went away. */
function connectionClass(sqlstate: string): boolean {
  return (
    sqlstate.startsWith('08') ||
    sqlstate === '57P01' ||
    sqlstate === '57P02' ||
    sqlstate === '57P03'
  );
}

/** The SQLSTATE of a `pg` error, when the server sent one. */
export function sqlstateOf(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * A `pg` failure as a TendError. `what` says what was being done (`creating role "app"`);
 * `mutating` is true when a statement that changes something may have reached the server, so that a
 * lost connection leaves the outcome unknown.
 */
export function pgError(e: unknown, what: string, mutating: boolean): TendError {
  if (e instanceof TendError) return e;
  const message = e instanceof Error ? e.message : String(e);
  const sqlstate = sqlstateOf(e);
  if (sqlstate !== undefined && !connectionClass(sqlstate)) {
    const known = KNOWN[sqlstate];
    return new TendError(
      known?.code ?? 'postgres.error',
      `${what}: ${message} (SQLSTATE ${sqlstate})`,
      {
        retryable: known?.retryable ?? false,
        hint: known?.hint ?? 'see the PostgreSQL message; fix the declaration or the cluster',
        cause: e,
      },
    );
  }
  // No SQLSTATE, or a connection class: the connection failed or the server went away.
  return new TendError('postgres.connection', `${what}: ${message}`, {
    retryable: true,
    outcomeUnknown: mutating,
    hint: 'is the server up and reachable? the next pass tries again',
    cause: e,
  });
}
