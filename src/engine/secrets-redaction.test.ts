import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ResourceTypeInfo } from '../core/index.js';
import { REDACTED, Redactor } from '../core/index.js';
import { redact } from './operator.js';
import { readSecret, sendableSpec } from './secrets.js';

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
    const info = {
      name: 'instances',
      sensitive: ['admin_password'],
    } as unknown as ResourceTypeInfo;
    expect(
      redact(info, { name: 'web', admin_password: 'returned-by-platform-9' }, redactor),
    ).toEqual({ name: 'web' });
    expect(redactor.text('returned-by-platform-9')).toBe(REDACTED);
  });
});
