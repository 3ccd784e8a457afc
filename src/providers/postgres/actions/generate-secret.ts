import { createHash, createHmac, pbkdf2Sync, randomBytes, randomInt } from 'node:crypto';

/** Letters and digits only: nothing that needs quoting in a URL, an env file, a shell or SQL. */
export const SECRET_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** The shortest password generated: 24 characters of 62 are over 140 bits. */
export const MIN_SECRET_LENGTH = 24;

/** A new password of `length` characters, each drawn uniformly (crypto random, no modulo bias). */
export function generateSecret(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += SECRET_ALPHABET[randomInt(SECRET_ALPHABET.length)];
  return out;
}

/**
 * The SCRAM-SHA-256 verifier PostgreSQL stores for a password (RFC 7677, as `\password` in psql
 * builds it): `ALTER ROLE … PASSWORD '<verifier>'` sets the password without the password itself
 * ever reaching the server, its logs or `pg_stat_statements`. The password must need no SASLprep
 * (true of SECRET_ALPHABET).
 */
export function scramVerifier(password: string, salt = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}
