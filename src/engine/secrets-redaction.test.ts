import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REDACTED, Redactor } from '../core/index.js';
import { redact } from './operator.js';
import { readSecret, sendableSpec } from './secrets.js';
import type { Workspace } from './workspace.js';
import { secretFields } from './workspace.js';

const dir = mkdtempSync(join(tmpdir(), 'tend-secrets-redaction-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('every secret Tend resolves is registered with the redactor', () => {
  it('a fromEnv and a fromFile value, as they are read', () => {
    writeFileSync(join(dir, 'token'), 'from-a-file-123\n');
    const redactor = new Redactor();
    expect(readSecret({ fromEnv: 'TOKEN' }, { TOKEN: 'from-the-env-456' }, dir, redactor)).toBe(
      'from-the-env-456',
    );
    expect(readSecret({ fromFile: 'token' }, {}, dir, redactor)).toBe('from-a-file-123');
    expect(redactor.text('from-the-env-456 from-a-file-123')).toBe(`${REDACTED} ${REDACTED}`);
  });

  it('every secret reference of a spec when it is made sendable, and nothing else', () => {
    const redactor = new Redactor();
    const sent = sendableSpec(
      { name: 'web', admin_password: { fromEnv: 'PW' } },
      { name: 'web' },
      { PW: 'hunter2-hunter2' },
      dir,
      redactor,
    );
    expect(sent).toEqual({ name: 'web', admin_password: 'hunter2-hunter2' });
    expect(redactor.text('web hunter2-hunter2')).toBe(`web ${REDACTED}`);
  });

  it('nothing when the secret cannot be read (the error names the source, never a value)', () => {
    const redactor = new Redactor();
    expect(() => readSecret({ fromEnv: 'UNSET' }, {}, dir, redactor)).toThrow(/UNSET/);
    expect(redactor.size).toBe(0);
  });

  it('a secret field the platform returned, as it is dropped from observed data', () => {
    const redactor = new Redactor();
    expect(
      redact(
        ['admin_password'],
        { name: 'web', admin_password: 'returned-by-platform-9' },
        redactor,
      ),
    ).toEqual({ name: 'web' });
    expect(redactor.text('returned-by-platform-9')).toBe(REDACTED);
  });
});

describe('secretFields', () => {
  const ws = {
    intent: {
      resources: [
        {
          address: 'sb.instances/web',
          type: 'sb.instances',
          spec: {
            name: 'web',
            token: { fromEnv: 'WEB_TOKEN' },
            admin_password: { fromFile: 'pw' },
          },
        },
      ],
    },
    typeOf: () => ({ info: { sensitive: ['admin_password'] } }),
  } as unknown as Workspace;

  it.each([
    ['a type without an address: the sensitive fields of its type', undefined, ['admin_password']],
    [
      'an undeclared address: the sensitive fields of its type',
      'sb.instances/gone',
      ['admin_password'],
    ],
    [
      'a declared address: also every field it fills from a secret reference, once',
      'sb.instances/web',
      ['admin_password', 'token'],
    ],
  ])('%s', (_label, address, expected) => {
    expect(secretFields(ws, 'sb.instances', address)).toEqual(expected);
  });

  it('a field filled from a secret reference is dropped from what is stored, and registered', () => {
    const redactor = new Redactor();
    const hidden = secretFields(ws, 'sb.instances', 'sb.instances/web');
    expect(redact(hidden, { name: 'web', token: 'echoed-token-77' }, redactor)).toEqual({
      name: 'web',
    });
    expect(redactor.text('echoed-token-77')).toBe(REDACTED);
  });
});
