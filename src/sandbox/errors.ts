/** The body of every error the sandbox answers with. */
export interface ErrorBody {
  readonly code: string;
  readonly message: string;
  readonly field?: string;
}

/**
 * A refusal by the sandbox: the HTTP status and the JSON body to answer with. Thrown anywhere in the
 * sandbox and turned into a response in exactly one place (the app's error handler).
 */
export class SandboxError extends Error {
  readonly status: 400 | 401 | 404 | 409 | 422 | 429 | 500 | 503;
  readonly code: string;
  readonly field: string | undefined;

  constructor(status: SandboxError['status'], code: string, message: string, field?: string) {
    super(message);
    this.name = 'SandboxError';
    this.status = status;
    this.code = code;
    this.field = field;
  }

  /** The JSON body: `{ code, message, field? }`. */
  body(): ErrorBody {
    return this.field === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, field: this.field };
  }
}
