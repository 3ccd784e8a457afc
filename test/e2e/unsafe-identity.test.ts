import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExample, ROOT, runCli } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// A type with no natural key, no tags for a marker and no idempotency key cannot be created without
// risking a duplicate after a crash: Tend refuses to create it, says why, and carries on with the rest.
const env = { QUICKSTART_ADMIN_PASSWORD: 'unsafe-identity-secret' };

describe('a type without a safe identity (CLI, real sandbox process)', () => {
  let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
  let ex: ReturnType<typeof copyExample>;

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    ex = copyExample('quickstart', sandbox.url);
    const doc = JSON.parse(readFileSync(join(ROOT, 'src', 'sandbox', 'openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, { parameters?: { $ref?: string }[] }>>;
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    delete doc.components.schemas['Service']!.properties['tags'];
    const post = doc.paths['/services']!['post']!;
    post.parameters = (post.parameters ?? []).filter((p) => !p.$ref?.endsWith('/IdempotencyKey'));
    writeFileSync(join(ex.dir, 'sandbox.openapi.json'), JSON.stringify(doc));
    ex.write(
      'provider.yaml',
      ex.read('provider.yaml').replace(/spec: .*/, 'spec: ./sandbox.openapi.json'),
    );
  });
  afterAll(async () => {
    await sandbox?.stop();
    ex?.cleanup();
  });

  it('refuses to create it with a clear message and creates everything else', async () => {
    const r = await runCli(['apply', ex.dir], { env });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /error sb\.services\/api: sb\.services has no safe identity \(no natural key .*no place for a marker .*, and no Idempotency-Key header on POST \/services.*\): Tend will not create it automatically/,
    );
    expect(r.stdout).toMatch(/error\s+sb\.services\/api: provider\.unsafe_create/);
    expect(r.stdout).toContain('hint: declare an identity for the type in an overlay');
    const types = (await sandbox.objects()).map((o) => o.type).sort();
    expect(types).toEqual(['buckets', 'instances', 'networks', 'volumes']);
  });
});
