import { createHmac } from 'node:crypto';
import { TendError } from '../core/index.js';

/** The shortest key material a ledger key accepts, in characters. */
export const MIN_LEDGER_KEY_LENGTH = 32;

/**
 * The secret that signs change-ledger entries (HMAC-SHA-256). The key material stays inside the
 * object: only `id` is data, so printing or serialising a LedgerKey shows the id and nothing else.
 * Stores receive one when they are opened and never read it from anywhere themselves.
 */
export interface LedgerKey {
  /** First 16 hex digits of HMAC(key, "tend ledger key id"): names the key without revealing it. */
  readonly id: string;
  /** HMAC-SHA-256 of `text` under the key, as 64 hex digits. */
  sign(text: string): string;
}

/** The message whose HMAC names a key (`LedgerKey.id`). */
const KEY_ID_MESSAGE = 'tend ledger key id';

/**
 * A ledger key from its material: the text of `TEND_LEDGER_KEY` or of a key file (surrounding
 * whitespace removed by the caller), used as UTF-8 bytes, so the same text gives the same key
 * whichever way it is passed. Refuses material shorter than MIN_LEDGER_KEY_LENGTH characters.
 */
export function ledgerKey(material: string): LedgerKey {
  if (material.length < MIN_LEDGER_KEY_LENGTH) {
    throw new TendError(
      'ledger.key-too-short',
      `a ledger key needs at least ${MIN_LEDGER_KEY_LENGTH} characters; this one has ${material.length}`,
      { phase: 'store', hint: 'generate one with: openssl rand -hex 32' },
    );
  }
  const secret = Buffer.from(material, 'utf8');
  const sign = (text: string): string => createHmac('sha256', secret).update(text).digest('hex');
  return Object.freeze({ id: sign(KEY_ID_MESSAGE).slice(0, 16), sign });
}
