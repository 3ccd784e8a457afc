import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address, WriteContext } from '../../core/index.js';
import { REDACTED, Redactor, TendError } from '../../core/index.js';
import { startSandbox } from '../../sandbox/index.js';
import type { RunningSandbox } from '../../sandbox/index.js';
import type { OpenApiProvider } from './openapi-provider.js';
import { createOpenApiProvider } from './openapi-provider.js';
import { prepareOpenApiDocument } from './document/load-document.js';

// The provider's part of "one redactor for every output": what the platform returns in a secret
// field is registered, and what the platform says in an error body is redacted before Tend quotes it.

let sb: RunningSandbox;
let served: Record<string, unknown>;

beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
  served = (await (await fetch(`${sb.url}/openapi.json`)).json()) as Record<string, unknown>;
});
afterAll(async () => {
  await sb.close();
});

const ctx = (name: string): WriteContext => ({
  actor: { actor: 'tend' },
  marker: { workspace: 'ws', address: `sb.${name}` as Address },
});

/** A provider whose POSTs (lifecycle calls aside) get `answer`'s response instead of the real one. */
async function provider(
  redactor: Redactor,
  answer: (real: Response, sent: Record<string, unknown>) => Promise<Response>,
): Promise<OpenApiProvider> {
  const rewrite: typeof fetch = async (input, init) => {
    const real = await fetch(input, init);
    const url = input instanceof Request ? input.url : input.toString();
    if (init?.method !== 'POST' || url.includes('/lifecycle') || !url.includes('/instances'))
      return real;
    return answer(real, JSON.parse(typeof init.body === 'string' ? init.body : '{}') as never);
  };
  return createOpenApiProvider({
    name: 'sb',
    document: await prepareOpenApiDocument(structuredClone(served), 'served'),
    endpoint: sb.url,
    workspace: 'ws',
    fetch: rewrite,
    redactor,
  });
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('openapi provider and the redactor', () => {
  it('registers a secret field the platform returns, so it is redacted wherever else it shows', async () => {
    const returned = 'generated-by-the-platform-42';
    const redactor = new Redactor();
    const p = await provider(redactor, async (real) =>
      json(real.status, { ...((await real.json()) as object), admin_password: returned }),
    );
    const net = await p.create('networks', { name: 'n', cidr: '10.6.0.0/16' }, ctx('networks/n'));
    const inst = await p.create(
      'instances',
      { name: 'web', network_id: net.id, image: 'debian-12' },
      ctx('instances/web'),
    );
    expect(inst.fields).not.toHaveProperty('admin_password');
    expect(redactor.text(`a log line with ${returned}`)).toBe(`a log line with ${REDACTED}`);
  });

  it('redacts a secret the platform echoes in an error body before quoting it in the error', async () => {
    const secret = 'sent-as-admin_password-7';
    const redactor = new Redactor();
    // As the engine does when it reads a secret reference to send it.
    redactor.add(secret);
    const p = await provider(redactor, async (real, sent) => {
      await real.arrayBuffer();
      return json(400, {
        code: 'invalid',
        message: `admin_password ${JSON.stringify(sent['admin_password'])} is too long`,
      });
    });
    const net = await p.create('networks', { name: 'm', cidr: '10.7.0.0/16' }, ctx('networks/m'));
    const e = await p
      .create(
        'instances',
        { name: 'web', network_id: net.id, image: 'debian-12', admin_password: secret },
        ctx('instances/web'),
      )
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(e).toBeInstanceOf(TendError);
    const err = e as TendError;
    expect(err.code).toBe('platform.invalid');
    expect(err.message).toContain(`admin_password "${REDACTED}" is too long`);
    expect(JSON.stringify({ ...err.toJSON(), health: p.health() })).not.toContain(secret);
  });
});
