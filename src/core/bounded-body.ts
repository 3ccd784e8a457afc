// Reading an answer from a platform without trusting its size (docs/decisions/0040). The response is
// handed in: this module does no I/O of its own, it only counts the bytes of a stream as they come.

/** The most bytes of one answer Tend reads from a platform unless told otherwise: 16 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/**
 * The largest `maxResponseBytes` a Provider may declare: 256 MiB, half of the longest string V8 holds
 * (2^29 - 24 characters), leaving room for the objects parsed from it.
 */
export const MAX_RESPONSE_BYTES_CEILING = 256 * 1024 * 1024;

/** A body read whole, or the news that it is larger than the limit (and was not read). */
export type BoundedBody =
  | { readonly ok: true; readonly text: string; readonly bytes: number }
  | {
      readonly ok: false;
      /** The Content-Length the platform declared, when that is what gave it away. */
      readonly declared?: number;
      /** How many bytes had arrived when reading stopped. */
      readonly received: number;
    };

/**
 * Reads a response's body as UTF-8 text, at most `maxBytes` bytes. A Content-Length above the limit
 * is refused before a byte is read; otherwise the bytes are counted as they stream in and reading
 * stops at the first chunk that passes the limit. Either way the body is cancelled at once (for
 * fetch: the connection is closed) and `onTooLarge` is called first, so that a caller can abort
 * the request too. Exactly `maxBytes` bytes pass; one more does not.
 */
export async function readBoundedText(
  response: Pick<Response, 'body' | 'headers'>,
  maxBytes: number,
  onTooLarge?: () => void,
): Promise<BoundedBody> {
  const body = response.body;
  if (body === null) return { ok: true, text: '', bytes: 0 };
  const declared = declaredLength(response.headers.get('content-length'));
  if (declared !== undefined && declared > maxBytes) {
    onTooLarge?.();
    await body.cancel().catch(() => undefined);
    return { ok: false, declared, received: 0 };
  }
  const reader = (body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) break;
    total += chunk.value.byteLength;
    if (total > maxBytes) {
      onTooLarge?.();
      await reader.cancel().catch(() => undefined);
      return { ok: false, received: total };
    }
    chunks.push(chunk.value);
  }
  return { ok: true, text: decode(chunks, total), bytes: total };
}

/** A byte count as people read it: `16 MiB`, `512 KiB`, `100 bytes`. */
export function formatBytes(bytes: number): string {
  const units: readonly [number, string][] = [
    [1024 * 1024 * 1024, 'GiB'],
    [1024 * 1024, 'MiB'],
    [1024, 'KiB'],
  ];
  for (const [size, unit] of units) {
    if (bytes >= size) return `${Math.round((bytes / size) * 10) / 10} ${unit}`;
  }
  return `${bytes} byte${bytes === 1 ? '' : 's'}`;
}

function declaredLength(value: string | null): number | undefined {
  if (value === null || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}

function decode(chunks: readonly Uint8Array[], total: number): string {
  if (chunks.length === 1 && chunks[0] !== undefined) return new TextDecoder().decode(chunks[0]);
  const all = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}
