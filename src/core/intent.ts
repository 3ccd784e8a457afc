import type { Address } from './address.js';
import type { ArbitrationDecl } from './arbitration.js';
import type { PolicyDecl } from './policy.js';

/** Where something was written: 1-based line and column in a file. */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/** How a provider authenticates. The secret itself never appears in intent: only where to find it. */
export interface AuthDecl {
  /** Header to send, e.g. `X-API-Key` or `Authorization`. */
  readonly header: string;
  /** Prefix before the secret, e.g. `Bearer `. */
  readonly prefix?: string;
  readonly fromEnv?: string;
  readonly fromFile?: string;
}

/** A `kind: Provider` document: a connection to one platform, of one of the provider types. */
export type ProviderDecl = OpenApiProviderDecl | PostgresProviderDecl;

/** A `type: openapi` Provider document: a REST API described by an OpenAPI document. */
export interface OpenApiProviderDecl {
  readonly kind: 'Provider';
  readonly name: string;
  readonly type: 'openapi';
  /** Absolute path or URL of the OpenAPI document. */
  readonly spec: string;
  readonly overlay?: string;
  /** Base URL of the API. */
  readonly endpoint: string;
  readonly auth?: AuthDecl;
  /** Most requests in flight at once against this provider. */
  readonly concurrency: number;
  /** Requests per second sent to this provider's endpoint; 0 for no limit. */
  readonly rateLimit: number;
  /** Request timeout in milliseconds. */
  readonly timeoutMs: number;
  /** The most bytes of one answer Tend reads from this provider (each page of a list apart). */
  readonly maxResponseBytes: number;
  /**
   * Origins besides the endpoint's (and the spec's) that redirects may lead to, normalised, or `*`;
   * credentials and request bodies are never sent there. Absent: redirects stay within the origin.
   */
  readonly allowRedirectsTo?: readonly string[];
  /**
   * Values of path parameters that are neither fixed by the overlay nor the id of a managed parent
   * (Keycloak's `realm`, Unleash's `projectId`), for this provider instance.
   */
  readonly parameters?: Readonly<Record<string, string>>;
  readonly source: SourceLocation;
}

/**
 * A `type: postgres` Provider document: a PostgreSQL cluster managed through its catalogs. The
 * connection URL comes from a secret reference, or from the libpq variables when absent.
 */
export interface PostgresProviderDecl {
  readonly kind: 'Provider';
  readonly name: string;
  readonly type: 'postgres';
  /** Where the `postgres://` URL is read from (`fromFile` resolved); absent: the libpq variables. */
  readonly connection?: SecretRef;
  /** TLS mode (libpq's names); absent: the URL's `sslmode`, then PGSSLMODE, then `disable`. */
  readonly sslMode?: 'disable' | 'require' | 'verify-ca' | 'verify-full';
  /** Absolute path of a PEM file with the CA to trust. */
  readonly sslRootCert?: string;
  /** `statement_timeout` of every connection, in milliseconds. */
  readonly statementTimeoutMs: number;
  /** `lock_timeout` of every connection, in milliseconds. */
  readonly lockTimeoutMs: number;
  /** Longest connecting may take, in milliseconds. */
  readonly connectTimeoutMs: number;
  /** The database the provider works in for schemas, grants and extensions; absent: the connection's. */
  readonly database?: string;
  readonly source: SourceLocation;
}

/** Secret values in a resource spec are written as a reference, resolved only when sent. */
export interface SecretRef {
  readonly fromEnv?: string;
  readonly fromFile?: string;
}

/** An `http` check: the URL must answer with one of the expected statuses (and body text). */
export interface HttpCheckDecl {
  readonly kind: 'http';
  readonly name: string;
  readonly url: string;
  readonly method: string;
  readonly expectStatus: readonly number[];
  readonly bodyContains?: string;
  readonly timeoutMs: number;
  /** Origins besides the URL's own that redirects may lead to, normalised, or `*`. */
  readonly allowRedirectsTo?: readonly string[];
  readonly source: SourceLocation;
}

/** A `cel` check: the expression over `observed` and `desired` must be true. */
export interface CelCheckDecl {
  readonly kind: 'cel';
  readonly name: string;
  readonly expr: string;
  readonly source: SourceLocation;
}

/**
 * A `dns` check: the DNS server must answer the query with exactly the expected records of the type
 * (a set, compared in one presentation: names lower-case with a trailing dot, TXT quoted).
 */
export interface DnsCheckDecl {
  readonly kind: 'dns';
  readonly name: string;
  /** The server to ask: `host:port` (port 53 when left out), `[v6]:port`; may hold references. */
  readonly server: string;
  /** The name asked for. */
  readonly query: string;
  /** The record type, upper-case: A, AAAA, CNAME, MX, TXT, NS, SOA, … */
  readonly type: string;
  /** The expected answers as written (normalised when compared); empty: no record of the type. */
  readonly expect: readonly string[];
  readonly timeoutMs: number;
  readonly source: SourceLocation;
}

/**
 * Where a `sql` check connects: a `postgres://` URL read from an environment variable or a file (a
 * secret: read when the check runs, never stored or shown), else the libpq variables of Tend's
 * environment (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`, …).
 */
export interface SqlConnectionDecl {
  readonly fromEnv?: string;
  readonly fromFile?: string;
  /** The role to log in as, instead of the URL's user or PGUSER. */
  readonly user?: string;
  /**
   * A file holding the password alone (a secret, read when the check runs, as `fromFile` secrets
   * are — the file `rotate-password` writes), instead of the URL's password or PGPASSWORD.
   */
  readonly passwordFromFile?: string;
  /** TLS mode, as libpq names it; overrides the URL's `sslmode` and PGSSLMODE. */
  readonly sslMode?: 'disable' | 'require' | 'verify-ca' | 'verify-full';
}

/** A scalar a `sql` check compares a returned value with (compared as text; null is SQL NULL). */
export type SqlScalar = string | number | boolean | null;

/**
 * A `sql` check: the query, run in a READ ONLY transaction with a statement timeout, must succeed
 * and its result meet every expectation given (none: succeeding is enough).
 */
export interface SqlCheckDecl {
  readonly kind: 'sql';
  readonly name: string;
  readonly connection: SqlConnectionDecl;
  readonly query: string;
  /** Exactly these rows, in this order (column names and values). */
  readonly rows?: readonly Readonly<Record<string, SqlScalar>>[];
  /** The number of rows returned lies within these bounds (inclusive). */
  readonly rowCount?: { readonly min?: number; readonly max?: number };
  /** The query returns one row of one column, equal to this (`{ is: null }` for NULL). */
  readonly value?: { readonly is: SqlScalar };
  /** A CEL expression over `rows` (a list of maps) and `rowCount` that must be true. */
  readonly expr?: string;
  readonly timeoutMs: number;
  readonly source: SourceLocation;
}

/**
 * A `tls` check: a TLS handshake with `host:port` must present a certificate that verifies (against
 * `ca` or Node's root certificates), matches `servername`, and has more than `minDaysLeft` days left. Only
 * the last failing is a warning (the certificate still works); anything else is an error.
 */
export interface TlsCheckDecl {
  readonly kind: 'tls';
  readonly name: string;
  /** The host to connect to (a name or an IP address); may hold references. */
  readonly host: string;
  readonly port: number;
  /** The name sent as SNI and checked against the certificate; absent: `host`. May hold references. */
  readonly servername?: string;
  /** Absolute path of a PEM file with the CA(s) to trust instead of Node's root certificates. */
  readonly ca?: string;
  readonly minDaysLeft: number;
  readonly timeoutMs: number;
  readonly source: SourceLocation;
}

/** A postcondition declared next to a resource, verified after every change and continuously. */
export type CheckDecl = HttpCheckDecl | CelCheckDecl | DnsCheckDecl | SqlCheckDecl | TlsCheckDecl;

/** Lifecycle settings of a resource. */
export interface LifecycleDecl {
  /** A stateful resource is never replaced or deleted without explicit approval. */
  readonly stateful: boolean;
}

/** A `kind: Resource` document: one thing that should exist. */
export interface ResourceDecl {
  readonly kind: 'Resource';
  readonly address: Address;
  /** `provider.resourceType`. */
  readonly type: string;
  readonly provider: string;
  readonly resourceType: string;
  readonly name: string;
  /** Declared fields. String values may hold `${type/name.path}` references; secrets are SecretRefs. */
  readonly spec: Readonly<Record<string, unknown>>;
  readonly lifecycle: LifecycleDecl;
  /**
   * Tend's own metadata about the resource (`tier: web`), matched by arbitration rules; never sent
   * to the platform, never part of the spec or the plan. loadIntent always sets it (empty when the
   * document has none); a declaration built by hand may leave it out, which means none.
   */
  readonly labels?: Readonly<Record<string, string>>;
  readonly checks: readonly CheckDecl[];
  /** Addresses this resource references, in order of first appearance. */
  readonly dependsOn: readonly Address[];
  /**
   * `moved: { from }`: the address this resource was declared under before. The object recorded (or
   * marked) under `from` is moved to this address, never deleted and created again.
   */
  readonly moved?: { readonly from: Address };
  readonly source: SourceLocation;
}

/**
 * A `kind: Workspace` document: names the workspace an intent directory manages. The name is carried
 * in the ownership marker of every object Tend creates, so two directories never share it by accident.
 */
export interface WorkspaceDecl {
  readonly kind: 'Workspace';
  readonly name: string;
  readonly source: SourceLocation;
}

/** The whole intent: every document in a directory, validated. */
export interface Intent {
  readonly dir: string;
  /** The Workspace document, when the directory has one. */
  readonly workspace?: WorkspaceDecl;
  /** A hash of every intent file's name and content: equal hashes, equal intent. */
  readonly contentHash: string;
  readonly providers: readonly ProviderDecl[];
  readonly resources: readonly ResourceDecl[];
  /**
   * The Arbitration documents in load order (file name, then position); `policyOf` makes them one
   * policy. loadIntent always sets it; an intent built by hand may leave it out, which means none
   * (the default policy).
   */
  readonly arbitration?: readonly ArbitrationDecl[];
  /**
   * The Policy documents in load order (docs/policies.md). loadIntent always sets it; an intent
   * built by hand may leave it out, which means none.
   */
  readonly policies?: readonly PolicyDecl[];
}

/** The document kinds Tend understands today. */
export const KNOWN_KINDS = ['Provider', 'Resource', 'Workspace', 'Arbitration', 'Policy'] as const;

/** What a workspace name may look like: it goes into tags and labels on every platform. */
export const WORKSPACE_NAME = /^[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?$/;
