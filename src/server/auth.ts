import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { Redactor } from '../core/index.js';
import { TendError } from '../core/index.js';

/** What a token may do; each role includes the ones before it. */
export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Who a request's token says is calling (its name, never the token). */
export interface Caller {
  readonly name: string;
  readonly role: Role;
}

/** A configured token: its SHA-256 (compared in constant time), the caller it stands for. */
export interface ApiToken extends Caller {
  readonly digest: Buffer;
}

/** The environment variable holding the token list (JSON or YAML, the same shape as the file). */
export const TOKENS_VARIABLE = 'TEND_API_TOKENS';

/** The shortest token accepted: a guessable token is no protection. */
export const MIN_TOKEN_LENGTH = 16;

/** Whether `role` may do what `needed` may. */
export function allows(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * Reads a token list: a YAML or JSON list of `{ token | tokenFromEnv, role, name }`. Every token is
 * registered with the redactor (no output can carry it). Throws `serve.bad_tokens` listing every
 * problem, each naming the entry and the key, without ever quoting a token.
 */
export function readTokens(
  text: string,
  where: string,
  env: Readonly<Record<string, string | undefined>>,
  redactor: Pick<Redactor, 'add'>,
): ApiToken[] {
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (e) {
    throw new TendError(
      'serve.bad_tokens',
      `${where} is neither YAML nor JSON: ${(e as Error).message.split('\n')[0]}`,
    );
  }
  if (!Array.isArray(data)) {
    throw new TendError('serve.bad_tokens', `${where} must be a list of { token, role, name }`, {
      hint: 'e.g. [{ "tokenFromEnv": "TEND_ADMIN_TOKEN", "role": "admin", "name": "ops" }]',
    });
  }
  const problems: string[] = [];
  const tokens: ApiToken[] = [];
  const names = new Set<string>();
  data.forEach((entry: unknown, i) => {
    const at = `${where} entry ${i + 1}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push(`${at}: must be a mapping with token (or tokenFromEnv), role and name`);
      return;
    }
    const e = entry as Record<string, unknown>;
    for (const k of Object.keys(e)) {
      if (!['token', 'tokenFromEnv', 'role', 'name'].includes(k)) {
        problems.push(`${at}: unknown key ${k} (known: token, tokenFromEnv, role, name)`);
      }
    }
    const name = e['name'];
    if (typeof name !== 'string' || name.trim() === '') {
      problems.push(`${at}: name must be a non-empty string (it names the caller in logs)`);
    } else if (names.has(name)) {
      problems.push(`${at}: name ${name} is used twice`);
    } else names.add(name);
    const role = e['role'];
    if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) {
      problems.push(`${at}: role must be one of ${ROLES.join(', ')}`);
    }
    let token: string | undefined;
    if (e['token'] !== undefined && e['tokenFromEnv'] !== undefined) {
      problems.push(`${at}: give token or tokenFromEnv, not both`);
    } else if (e['token'] !== undefined) {
      if (typeof e['token'] !== 'string') problems.push(`${at}: token must be a string`);
      else token = e['token'];
    } else if (e['tokenFromEnv'] !== undefined) {
      const v = e['tokenFromEnv'];
      if (typeof v !== 'string' || v === '') {
        problems.push(`${at}: tokenFromEnv must name an environment variable`);
      } else if (env[v] === undefined || env[v] === '') {
        problems.push(`${at}: the environment variable ${v} (tokenFromEnv) is not set`);
      } else token = env[v];
    } else {
      problems.push(`${at}: token or tokenFromEnv is required`);
    }
    if (token !== undefined) {
      redactor.add(token);
      if (token.length < MIN_TOKEN_LENGTH) {
        problems.push(
          `${at}: the token is shorter than ${MIN_TOKEN_LENGTH} characters (openssl rand -hex 32 makes a good one)`,
        );
      }
    }
    if (problems.length === 0 && token !== undefined) {
      tokens.push({ name: name as string, role: role as Role, digest: digest(token) });
    }
  });
  if (problems.length > 0) {
    throw new TendError(
      'serve.bad_tokens',
      `${where} has ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${problems.map((p) => `  ${p}`).join('\n')}`,
      { hint: 'docs/api.md, "Tokens and roles"' },
    );
  }
  return tokens;
}

/** The tokens of `--tokens <file>` and of TEND_API_TOKENS, together. */
export function loadTokens(
  file: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  redactor: Pick<Redactor, 'add'>,
): ApiToken[] {
  const tokens: ApiToken[] = [];
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new TendError('serve.bad_tokens', `cannot read ${file}: ${(e as Error).message}`);
    }
    for (const t of readTokens(text, file, env, redactor)) tokens.push(t);
  }
  const fromEnv = env[TOKENS_VARIABLE];
  if (fromEnv !== undefined && fromEnv.trim() !== '') {
    for (const t of readTokens(fromEnv, TOKENS_VARIABLE, env, redactor)) tokens.push(t);
  }
  return tokens;
}

/**
 * The caller a bearer token stands for, or undefined for none or an unknown one. Every configured
 * token is compared (in constant time, as fixed-length digests), so the time taken says nothing about
 * which token came close.
 */
export function authenticate(
  header: string | undefined,
  tokens: readonly ApiToken[],
): Caller | undefined {
  const m = header === undefined ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!m) return undefined;
  const given = digest(m[1]!);
  let found: ApiToken | undefined;
  for (const t of tokens) {
    if (timingSafeEqual(given, t.digest) && found === undefined) found = t;
  }
  return found ? { name: found.name, role: found.role } : undefined;
}
