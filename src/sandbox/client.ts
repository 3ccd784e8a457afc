/** Something that answers requests: a sandbox's Hono app in-process, or a base URL over HTTP. */
export type SandboxTarget =
  string | { request(path: string, init?: RequestInit): Response | Promise<Response> };

/** A decoded answer: status, headers and the parsed JSON body (undefined when empty). */
export interface SandboxReply {
  readonly status: number;
  readonly headers: Headers;
  // The body is whatever JSON the sandbox sent; callers assert its shape.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any;
}

/** Extra request options: headers (actor, intent, idempotency key, API key) and an abort signal. */
export interface CallOptions {
  readonly headers?: Record<string, string>;
  readonly signal?: AbortSignal;
}

/** A tiny JSON client for tests and demos: the same calls in-process or over HTTP. */
export interface SandboxClient {
  call(method: string, path: string, body?: unknown, options?: CallOptions): Promise<SandboxReply>;
  get(path: string, options?: CallOptions): Promise<SandboxReply>;
  post(path: string, body: unknown, options?: CallOptions): Promise<SandboxReply>;
  patch(path: string, body: unknown, options?: CallOptions): Promise<SandboxReply>;
  put(path: string, body: unknown, options?: CallOptions): Promise<SandboxReply>;
  delete(path: string, options?: CallOptions): Promise<SandboxReply>;
}

/** A client for a sandbox; `headers` are sent with every call (e.g. the API key). */
export function sandboxClient(
  target: SandboxTarget,
  headers: Record<string, string> = {},
): SandboxClient {
  const send =
    typeof target === 'string'
      ? (path: string, init: RequestInit) => fetch(`${target}${path}`, init)
      : (path: string, init: RequestInit) => Promise.resolve(target.request(path, init));
  const call = async (method: string, path: string, body?: unknown, options: CallOptions = {}) => {
    const response = await send(path, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
        ...options.headers,
      },
      ...(body === undefined
        ? {}
        : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text === '' ? undefined : (JSON.parse(text) as unknown),
    };
  };
  return {
    call,
    get: (path, options) => call('GET', path, undefined, options),
    post: (path, body, options) => call('POST', path, body, options),
    patch: (path, body, options) => call('PATCH', path, body, options),
    put: (path, body, options) => call('PUT', path, body, options),
    delete: (path, options) => call('DELETE', path, undefined, options),
  };
}
