// The runner of `sql` checks: reads the check's connection (a secret) when the check runs, and asks
// PostgreSQL through the one connection module, read-only.
import type { SqlRunner } from '../checks/index.js';
import type { SecretRegistry } from '../core/index.js';
import { toTendError } from '../core/index.js';
import { readSecret } from '../engine/index.js';
import { resolveConnection } from '../providers/index.js';

/** What running `sql` checks needs from the process. */
export interface SqlRunnerOptions {
  /** Tend's environment: `fromEnv` URLs and the libpq variables are read from it. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The intent directory (`fromFile` is relative to it and confined as every secret file). */
  readonly dir: string;
  /** The process's redactor: the URL and the password are registered before anything is sent. */
  readonly secrets: SecretRegistry;
}

/**
 * A SqlRunner over real connections. The URL is read at each run (never kept), its password
 * registered with the redactor; a connection that cannot be read or resolved is a failure of the
 * check, never a throw.
 */
export function sqlRunner(options: SqlRunnerOptions): SqlRunner {
  return async (request) => {
    let connection;
    try {
      const { fromEnv, fromFile, user, passwordFromFile, sslMode } = request.connection;
      let url: string | undefined;
      if (fromEnv !== undefined || fromFile !== undefined) {
        url = readSecret(
          {
            ...(fromEnv !== undefined && { fromEnv }),
            ...(fromFile !== undefined && { fromFile }),
          },
          options.env,
          options.dir,
          options.secrets,
        );
      }
      const password =
        passwordFromFile === undefined
          ? undefined
          : readSecret({ fromFile: passwordFromFile }, options.env, options.dir, options.secrets);
      connection = resolveConnection(
        {
          ...(url !== undefined && { url }),
          ...(user !== undefined && { user }),
          ...(password !== undefined && { password }),
          ...(sslMode !== undefined && { sslMode }),
          applicationName: 'tend-check',
          statementTimeoutMs: request.timeoutMs,
        },
        options.env,
        options.secrets,
      );
    } catch (e) {
      const err = toTendError(e);
      return {
        ok: false,
        phase: 'connection',
        message: err.hint ? `${err.message} (${err.hint})` : err.message,
      };
    }
    // The `pg` driver is loaded by the first sql check that runs (docs/decisions/0033-lazy-modules.md).
    const { runReadOnlyQuery } = await import('../providers/postgres/index.js');
    return runReadOnlyQuery(connection, request.query, {
      timeoutMs: request.timeoutMs,
      ...(request.signal ? { signal: request.signal } : {}),
    });
  };
}
