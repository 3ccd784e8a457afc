import { createHmac } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { TendError } from '../core/index.js';
import { ledgerKey } from './ledger-key.js';

const MATERIAL = '0123456789abcdef0123456789abcdef-material';

describe('ledgerKey', () => {
  it('names the key by the first 16 hex digits of HMAC(key, "tend ledger key id")', () => {
    const key = ledgerKey(MATERIAL);
    expect(key.id).toBe(
      createHmac('sha256', MATERIAL).update('tend ledger key id').digest('hex').slice(0, 16),
    );
    expect(ledgerKey(`${MATERIAL}x`).id).not.toBe(key.id);
  });

  it('signs with HMAC-SHA-256 under the material as UTF-8', () => {
    const key = ledgerKey('ключ-'.repeat(8));
    expect(key.sign('text')).toBe(
      createHmac('sha256', Buffer.from('ключ-'.repeat(8), 'utf8'))
        .update('text')
        .digest('hex'),
    );
  });

  it('never shows the material when printed or serialised', () => {
    const key = ledgerKey(MATERIAL);
    expect(JSON.stringify(key)).toBe(JSON.stringify({ id: key.id }));
    expect(inspect(key, { showHidden: true, depth: 5 })).not.toContain(MATERIAL);
    expect(`${Object.values(key).join(' ')}`).not.toContain(MATERIAL);
  });

  it('refuses material shorter than 32 characters, without repeating it', () => {
    let error: unknown;
    try {
      ledgerKey('short-key');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(TendError);
    expect((error as TendError).code).toBe('ledger.key-too-short');
    expect((error as TendError).message).toBe(
      'a ledger key needs at least 32 characters; this one has 9',
    );
    expect(ledgerKey('x'.repeat(32)).id).toMatch(/^[0-9a-f]{16}$/);
  });
});
