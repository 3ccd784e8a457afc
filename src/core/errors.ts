/** The phase of the loop an error happened in. */
export type Phase =
  'load' | 'observe' | 'plan' | 'apply' | 'verify' | 'check' | 'recover' | 'store' | 'lease';

/** Options for a TendError. */
export interface TendErrorOptions {
  readonly address?: string;
  readonly phase?: Phase;
  /** Whether trying the same thing again may succeed (timeouts, 429, 5xx). */
  readonly retryable?: boolean;
  /**
   * True when a mutation may or may not have taken effect (a timeout after the request was sent).
   * The journal resolves such operations by looking the object up, never by blind resending.
   */
  readonly outcomeUnknown?: boolean;
  /** HTTP status, when the error came from an HTTP API. */
  readonly status?: number;
  /** Seconds the platform asked us to wait (Retry-After). */
  readonly retryAfterSeconds?: number;
  readonly hint?: string;
  readonly cause?: unknown;
}

/**
 * Errors are values: a stable code, the address and phase they belong to, a message that says what
 * to do, and whether retrying may help. Whether to retry is a property of the error, not the caller.
 */
export class TendError extends Error {
  readonly code: string;
  readonly address: string | undefined;
  readonly phase: Phase | undefined;
  readonly retryable: boolean;
  readonly outcomeUnknown: boolean;
  readonly status: number | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly hint: string | undefined;

  constructor(code: string, message: string, options: TendErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TendError';
    this.code = code;
    this.address = options.address;
    this.phase = options.phase;
    this.retryable = options.retryable ?? false;
    this.outcomeUnknown = options.outcomeUnknown ?? false;
    this.status = options.status;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.hint = options.hint;
  }

  /** A copy of this error bound to an address and phase. */
  at(address: string, phase: Phase): TendError {
    return new TendError(this.code, this.message, {
      address,
      phase,
      retryable: this.retryable,
      outcomeUnknown: this.outcomeUnknown,
      status: this.status,
      retryAfterSeconds: this.retryAfterSeconds,
      hint: this.hint,
      cause: this.cause,
    });
  }

  /** A plain object for `--json` output and the store. */
  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      address: this.address,
      phase: this.phase,
      retryable: this.retryable,
      outcomeUnknown: this.outcomeUnknown || undefined,
      status: this.status,
      hint: this.hint,
    };
  }
}

/** Wraps anything thrown into a TendError, keeping TendErrors as they are. */
export function toTendError(e: unknown, code = 'internal'): TendError {
  if (e instanceof TendError) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new TendError(code, message, { cause: e });
}
