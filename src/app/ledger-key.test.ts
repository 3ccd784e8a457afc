import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Change } from '../core/index.js';
import { TendError } from '../core/index.js';
import { ledgerKey } from '../store/index.js';
import type { LedgerKeyOptions } from './ledger-key.js';
import { keyChangeNotice, resolveLedgerKey, userLedgerKeyPath } from './ledger-key.js';

const root = mkdtempSync(join(tmpdir(), 'tend-ledger-key-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
/** A fresh empty directory. */
function fresh(): string {
  const dir = join(root, `d${++n}`);
  mkdirSync(dir);
  return dir;
}

const MATERIAL = 'f'.repeat(16) + '0123456789abcdef0123456789abcdef';
const posix = process.platform !== 'win32';
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** Resolves with a home of its own (never the real one) and collects the secrets registered. */
function resolveIn(
  env: Record<string, string>,
  options: Partial<LedgerKeyOptions> = {},
): ReturnType<typeof resolveLedgerKey> & { secrets: unknown[] } {
  const secrets: unknown[] = [];
  const resolved = resolveLedgerKey({
    env,
    use: 'sign',
    home: options.home ?? fresh(),
    secrets: { add: (s) => secrets.push(s) },
    ...options,
  });
  return { ...resolved, secrets };
}

function refusal(env: Record<string, string>, options: Partial<LedgerKeyOptions> = {}): TendError {
  try {
    resolveIn(env, options);
  } catch (e) {
    expect(e).toBeInstanceOf(TendError);
    return e as TendError;
  }
  throw new Error('expected a refusal');
}

/** A key file holding `text`, with `fileMode`. */
function keyFile(text: string, fileMode = 0o600): string {
  const path = join(fresh(), 'ledger.key');
  writeFileSync(path, text, { mode: fileMode });
  chmodSync(path, fileMode);
  return path;
}

describe('resolveLedgerKey: TEND_LEDGER_KEY', () => {
  it('uses the variable’s text, trimmed, and tells the redactor', () => {
    const r = resolveIn({ TEND_LEDGER_KEY: ` ${MATERIAL}\n` });
    expect(r.key.id).toBe(ledgerKey(MATERIAL).id);
    expect(r.source).toEqual({ kind: 'env', variable: 'TEND_LEDGER_KEY' });
    expect(r.secrets).toEqual([MATERIAL]);
    expect(r.notices).toEqual([]);
  });

  it('refuses a key shorter than 32 characters, without repeating it', () => {
    const e = refusal({ TEND_LEDGER_KEY: 'hunter2-hunter2' });
    expect(e.code).toBe('ledger.key-too-short');
    expect(e.message).toBe('TEND_LEDGER_KEY has 15 characters; a ledger key needs at least 32');
    expect(e.hint).toBe('generate one with: openssl rand -hex 32');
  });

  it('refuses both variables at once', () => {
    const e = refusal({ TEND_LEDGER_KEY: MATERIAL, TEND_LEDGER_KEY_FILE: keyFile(MATERIAL) });
    expect(e.code).toBe('ledger.key-conflict');
    expect(e.message).toBe(
      'both TEND_LEDGER_KEY and TEND_LEDGER_KEY_FILE are set; Tend will not guess which key signs the ledger',
    );
  });
});

describe('resolveLedgerKey: TEND_LEDGER_KEY_FILE', () => {
  it('reads the file, trimmed: the same text gives the same key as the variable', () => {
    const path = keyFile(`${MATERIAL}\n`);
    const r = resolveIn({ TEND_LEDGER_KEY_FILE: path });
    expect(r.key.id).toBe(ledgerKey(MATERIAL).id);
    expect(r.source).toEqual({ kind: 'file', path });
    expect(r.secrets).toEqual([MATERIAL]);
    expect(r.notices).toEqual([]);
  });

  it.skipIf(!posix)('warns about a key file others can read', () => {
    const path = keyFile(MATERIAL, 0o644);
    expect(resolveIn({ TEND_LEDGER_KEY_FILE: path }).notices).toEqual([
      `the ledger key file ${path} is open to others (mode 0644): whoever can read it can rewrite the ledger undetected; chmod 600 it`,
    ]);
  });

  it('warns about a key file beside the store', () => {
    const path = keyFile(MATERIAL);
    expect(
      resolveIn({ TEND_LEDGER_KEY_FILE: path }, { storeDir: join(path, '..') }).notices,
    ).toEqual([
      `the ledger key file ${path} lies beside the store: whoever can edit the store can read the key and rewrite the ledger undetected; keep the key elsewhere`,
    ]);
  });

  const cases: {
    name: string;
    path: () => string;
    code: string;
    message: (p: string) => string;
  }[] = [
    {
      name: 'a missing file',
      path: () => join(fresh(), 'absent.key'),
      code: 'ledger.key-file-missing',
      message: (p) => `TEND_LEDGER_KEY_FILE names ${p}, which does not exist`,
    },
    {
      name: 'a symbolic link',
      path: () => {
        const link = join(fresh(), 'link.key');
        symlinkSync(keyFile(MATERIAL), link);
        return link;
      },
      code: 'ledger.key-file-link',
      message: (p) =>
        `TEND_LEDGER_KEY_FILE names ${p}, which is a symbolic link; Tend reads a ledger key only from the file itself`,
    },
    {
      name: 'a directory',
      path: () => fresh(),
      code: 'ledger.key-file-not-regular',
      message: (p) => `TEND_LEDGER_KEY_FILE names ${p}, which is not a regular file`,
    },
    {
      name: 'a file over 4 KiB',
      path: () => keyFile('k'.repeat(4097)),
      code: 'ledger.key-file-too-large',
      message: (p) =>
        `TEND_LEDGER_KEY_FILE names ${p}, which is 4097 bytes; a ledger key file holds at most 4096`,
    },
    {
      name: 'a key shorter than 32 characters',
      path: () => keyFile('short\n'),
      code: 'ledger.key-too-short',
      message: (p) => `the ledger key in ${p} has 5 characters; a ledger key needs at least 32`,
    },
  ];
  it.each(cases)('refuses $name', ({ path, code, message }) => {
    const p = path();
    const e = refusal({ TEND_LEDGER_KEY_FILE: p });
    expect(e.code).toBe(code);
    expect(e.message).toBe(message(p));
  });

  it.skipIf(!posix)('refuses a FIFO without opening it (no hang)', () => {
    const fifo = join(fresh(), 'fifo.key');
    execFileSync('mkfifo', [fifo]);
    const e = refusal({ TEND_LEDGER_KEY_FILE: fifo });
    expect(e.code).toBe('ledger.key-file-not-regular');
  });
});

describe('resolveLedgerKey: the per-user key file', () => {
  it('lives in $XDG_CONFIG_HOME/tend, else ~/.config/tend; a relative XDG_CONFIG_HOME is ignored', () => {
    expect(userLedgerKeyPath({ XDG_CONFIG_HOME: '/cfg' }, '/home/u')).toBe(
      join('/cfg', 'tend', 'ledger.key'),
    );
    expect(userLedgerKeyPath({ XDG_CONFIG_HOME: 'cfg', HOME: '/h' }, '/home/u')).toBe(
      join('/h', '.config', 'tend', 'ledger.key'),
    );
    expect(userLedgerKeyPath({}, '/home/u')).toBe(join('/home/u', '.config', 'tend', 'ledger.key'));
  });

  it.skipIf(!posix)(
    'is created on first use with 32 random bytes as hex, 0600 in a 0700 directory, even under umask 000',
    () => {
      const config = fresh();
      const old = process.umask(0o000);
      let first;
      try {
        first = resolveIn({ XDG_CONFIG_HOME: config });
      } finally {
        process.umask(old);
      }
      const path = join(config, 'tend', 'ledger.key');
      expect(first.source).toEqual({ kind: 'user-file', path, created: true });
      const text = readFileSync(path, 'utf8');
      expect(text).toMatch(/^[0-9a-f]{64}\n$/);
      expect(first.key.id).toBe(ledgerKey(text.trim()).id);
      expect(first.secrets).toEqual([text.trim()]);
      expect(mode(path)).toBe('600');
      expect(mode(join(config, 'tend'))).toBe('700');
      expect(first.notices).toEqual([
        `created the ledger key ${path} (mode 0600): it signs the change ledger; keep a copy somewhere safe, \`tend ledger verify\` needs it`,
      ]);
      const again = resolveIn({ XDG_CONFIG_HOME: config });
      expect(again.key.id).toBe(first.key.id);
      expect(again.source).toEqual({ kind: 'user-file', path, created: false });
      expect(again.notices).toEqual([]);
    },
  );

  it('gives each user a key of their own', () => {
    expect(resolveIn({ XDG_CONFIG_HOME: fresh() }).key.id).not.toBe(
      resolveIn({ XDG_CONFIG_HOME: fresh() }).key.id,
    );
  });

  it('is never created to verify: no key is an error naming where one was looked for', () => {
    const config = fresh();
    const e = refusal({ XDG_CONFIG_HOME: config }, { use: 'verify' });
    expect(e.code).toBe('ledger.no-key');
    expect(e.message).toBe(
      `no ledger key: TEND_LEDGER_KEY and TEND_LEDGER_KEY_FILE are unset and ${join(config, 'tend', 'ledger.key')} does not exist`,
    );
    expect(existsSync(join(config, 'tend'))).toBe(false);
  });

  it('says so when it cannot be created', () => {
    const blocker = keyFile('not a directory');
    const e = refusal({ XDG_CONFIG_HOME: blocker });
    expect(e.code).toBe('ledger.key-create-failed');
    expect(e.message).toMatch(
      new RegExp(
        `^cannot create the ledger key file ${join(blocker, 'tend', 'ledger.key').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(E[A-Z]+\\)$`,
      ),
    );
  });
});

describe('keyChangeNotice', () => {
  const key = ledgerKey(MATERIAL);
  const last = (keyId?: string): Change =>
    ({ seq: 7, ...(keyId ? { keyId } : {}) }) as unknown as Change;

  it('says nothing for an empty ledger, one written with this key, or old entries only', () => {
    expect(keyChangeNotice(undefined, key)).toBeUndefined();
    expect(keyChangeNotice(last(key.id), key)).toBeUndefined();
    expect(keyChangeNotice(last(), key)).toBeUndefined();
  });

  it('tells a writer that the ledger was signed with another key', () => {
    expect(keyChangeNotice(last('0123456789abcdef'), key)).toBe(
      `the change ledger was signed with key id 0123456789abcdef up to entry 7; this process signs with key id ${key.id}, so \`tend ledger verify\` will stop at entry 8: use the key that wrote the ledger (TEND_LEDGER_KEY or TEND_LEDGER_KEY_FILE)`,
    );
  });
});
