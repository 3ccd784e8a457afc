import { describe, expect, it } from 'vitest';
import { formatBytes, readBoundedText } from './bounded-body.js';

// readBoundedText counts the bytes of a body as they stream in: exactly the limit passes, one more
// does not, a Content-Length above the limit is refused before a byte is read, and the body is
// cancelled at once when the limit is passed.

/** A response whose body is the given chunks, one `pull` each; it records what was pulled. */
function streamed(chunks: readonly string[], headers: Record<string, string> = {}) {
  const log = { pulled: 0, cancelled: false };
  const encoder = new TextEncoder();
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks[i++];
      if (next === undefined) controller.close();
      else {
        log.pulled++;
        controller.enqueue(encoder.encode(next));
      }
    },
    cancel() {
      log.cancelled = true;
    },
  });
  return { response: new Response(body, { headers }), log };
}

/** A response whose body never ends: `{"id":n},` forever, counting the chunks read. */
function endless() {
  const log = { pulled: 0, cancelled: false };
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(encoder.encode(log.pulled === 0 ? '[' : `{"id":${log.pulled}},`));
      log.pulled++;
    },
    cancel() {
      log.cancelled = true;
    },
  });
  return { response: new Response(body), log };
}

describe('readBoundedText', () => {
  it('reads a body of exactly the limit', async () => {
    const { response } = streamed(['0123456789']);
    expect(await readBoundedText(response, 10)).toEqual({
      ok: true,
      text: '0123456789',
      bytes: 10,
    });
  });

  it('refuses one byte more, and cancels the body', async () => {
    const { response, log } = streamed(['0123456789', 'a', 'never read']);
    let told = 0;
    const read = await readBoundedText(response, 10, () => told++);
    expect(read).toEqual({ ok: false, received: 11 });
    expect(told).toBe(1);
    expect(log.cancelled).toBe(true);
    expect(log.pulled).toBe(2);
  });

  it('counts bytes, not characters, across chunks (a chunked body)', async () => {
    // "é" is two bytes in UTF-8: 4 chunks of 3 bytes each make 12 bytes in 8 characters.
    const chunks = ['aé', 'bé', 'cé', 'dé'];
    expect(await readBoundedText(streamed(chunks).response, 12)).toEqual({
      ok: true,
      text: 'aébécédé',
      bytes: 12,
    });
    expect(await readBoundedText(streamed(chunks).response, 11)).toEqual({
      ok: false,
      received: 12,
    });
  });

  it('keeps a character split between chunks whole', async () => {
    const bytes = new TextEncoder().encode('€');
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.subarray(0, 1));
        controller.enqueue(bytes.subarray(1));
        controller.close();
      },
    });
    expect(await readBoundedText(new Response(body), 3)).toEqual({ ok: true, text: '€', bytes: 3 });
  });

  it('refuses a Content-Length above the limit before reading anything', async () => {
    const { response, log } = streamed(['x'.repeat(20)], { 'content-length': '20' });
    let told = 0;
    expect(await readBoundedText(response, 19, () => told++)).toEqual({
      ok: false,
      declared: 20,
      received: 0,
    });
    expect(told).toBe(1);
    expect(log.cancelled).toBe(true);
    expect(log.pulled).toBe(0);
  });

  it('reads a Content-Length of exactly the limit', async () => {
    const { response } = streamed(['x'.repeat(20)], { 'content-length': '20' });
    expect(await readBoundedText(response, 20)).toMatchObject({ ok: true, bytes: 20 });
  });

  it('stops an endless body just past the limit', async () => {
    const { response, log } = endless();
    const read = await readBoundedText(response, 1000);
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.received).toBeLessThanOrEqual(1000 + 20);
    expect(log.cancelled).toBe(true);
    const pulled = log.pulled;
    await new Promise((r) => setTimeout(r, 20));
    expect(log.pulled).toBe(pulled);
  });

  it('reads an absent body as empty text', async () => {
    expect(await readBoundedText(new Response(null), 1)).toEqual({ ok: true, text: '', bytes: 0 });
  });
});

describe('formatBytes', () => {
  it.each([
    [1, '1 byte'],
    [100, '100 bytes'],
    [1024, '1 KiB'],
    [1536, '1.5 KiB'],
    [16 * 1024 * 1024, '16 MiB'],
    [1024 ** 3, '1 GiB'],
  ])('%d is %s', (n, text) => expect(formatBytes(n)).toBe(text));
});
