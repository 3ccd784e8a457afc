// The PostgreSQL side of the providers layer that loads the `pg` driver (~35 ms of CPU): the native
// provider (docs/postgres.md), the DDL audit feed and the read-only query of `sql` checks. Import it
// with `await import()` at the point of use, never statically from a module every command loads
// (eslint and src/cli/start.test.ts hold that; docs/decisions/0033-lazy-modules.md). What needs no
// driver (the connection configuration, the ids) is exported by ../index.ts.
export type {
  AuditClient,
  AuditEntry,
  AuditFeedOptions,
  AuditInstallation,
  AuditObjectMapper,
  AuditTrigger,
} from './ddl-audit.js';
export {
  AUDIT_VERSION,
  auditInstallStatements,
  auditUninstallStatements,
  DEFAULT_AUDIT_SCHEMA,
  identityNames,
  installAudit,
  readAuditEntries,
  readAuditFeed,
  readAuditInstallation,
  uninstallAudit,
} from './ddl-audit.js';
export type { ReadOnlyResult } from './read-only-query.js';
export { runReadOnlyQuery } from './read-only-query.js';
export type { PostgresProvider, PostgresProviderOptions } from './postgres-provider.js';
export { createPostgresProvider } from './postgres-provider.js';
