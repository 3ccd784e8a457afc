import type { SqlRunner } from './sql-check.js';

/** What running a check may use: the resource's state, reference resolution, a clock and I/O. */
export interface CheckContext {
  /** The resource as the platform reports it now (all fields, read-only ones included). */
  readonly observed: Record<string, unknown>;
  /** The declared spec, references resolved where known. */
  readonly desired: Record<string, unknown>;
  /** Substitutes `${…}` references in a text; undefined when one cannot be resolved (yet). */
  readonly resolve: (text: string) => string | undefined;
  /** The clock: stamps results. */
  readonly now: () => Date;
  /** The fetch to use (defaults to the global one). */
  readonly fetch?: typeof fetch;
  /** The User-Agent `http` checks send (default: none of Tend's). */
  readonly userAgent?: string;
  /** The most bytes of an answer an `http` check reads (default 16 MiB). */
  readonly maxResponseBytes?: number;
  /** Runs the queries of `sql` checks (the application layer gives it); without it they fail. */
  readonly sql?: SqlRunner;
  /** Aborts a running check (the engine shutting down). */
  readonly signal?: AbortSignal;
}
