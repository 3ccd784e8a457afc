import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  displayUrl,
  MIN_SECRET_LENGTH,
  REDACTED,
  REDACTED_ALT,
  Redactor,
  urlCredentials,
} from './redact.js';

const b64 = (s: string) => Buffer.from(s).toString('base64').replace(/=+$/, '');

describe('Redactor.text', () => {
  const cases: {
    name: string;
    reason: string;
    secrets: string[];
    urls?: string[];
    input: string;
    want: string;
  }[] = [
    {
      name: 'as is',
      reason: 'a platform quoting the value it was sent',
      secrets: ['hunter22'],
      input: 'admin_password "hunter22" is too weak',
      want: `admin_password "${REDACTED}" is too weak`,
    },
    {
      name: 'every occurrence',
      reason: 'a message may repeat the value',
      secrets: ['hunter22'],
      input: 'hunter22 != hunter22',
      want: `${REDACTED} != ${REDACTED}`,
    },
    {
      name: 'URL-encoded',
      reason: 'a secret sent in a query or path comes back percent-encoded',
      secrets: ['p@ss/w rd'],
      input: 'GET /x?key=p%40ss%2Fw%20rd failed',
      want: `GET /x?key=${REDACTED} failed`,
    },
    {
      name: 'form-encoded',
      reason: 'application/x-www-form-urlencoded writes a space as +',
      secrets: ['pass word'],
      input: 'body: key=pass+word',
      want: `body: key=${REDACTED}`,
    },
    {
      name: 'JSON-escaped',
      reason: 'a secret with quotes or backslashes inside a JSON text',
      secrets: ['a"b\\c'],
      input: '{"message":"bad value a\\"b\\\\c"}',
      want: `{"message":"bad value ${REDACTED}"}`,
    },
    {
      name: 'base64',
      reason: 'a token echoed in its encoded form',
      secrets: ['s3cr3t-token'],
      input: `token ${b64('s3cr3t-token')}== rejected`,
      want: `token ${REDACTED}== rejected`,
    },
    {
      name: 'basic auth from a URL',
      reason: 'the Authorization header Tend builds from user-info is base64 of user:password',
      secrets: [],
      urls: ['https://admin:pa55word@example.org/'],
      input: `sent Authorization: Basic ${b64('admin:pa55word')}`,
      want: `sent Authorization: Basic ${REDACTED}`,
    },
    {
      name: 'short secret',
      reason: `secrets under ${MIN_SECRET_LENGTH} characters are not searched for`,
      secrets: ['abc'],
      input: 'abc abcd',
      want: 'abc abcd',
    },
    {
      name: 'longest first',
      reason: 'a secret containing another is replaced whole, not in pieces',
      secrets: ['abcd', 'abcdefgh'],
      input: 'x abcdefgh y abcd',
      want: `x ${REDACTED} y ${REDACTED}`,
    },
    {
      name: 'part of the marker',
      reason: 'a secret the marker spells is replaced with the other marker',
      secrets: ['acted'],
      input: 'the value acted was refused',
      want: `the value ${REDACTED_ALT} was refused`,
    },
    {
      name: 'spelled again by a marker',
      reason: 'the marker next to leftover text must not spell the secret a second time',
      secrets: ['ted»x'],
      input: 'ted»xx',
      want: `«redac${REDACTED}`,
    },
    {
      name: 'URL user-info',
      reason: 'credentials in a URL are shown without them, registered or not',
      secrets: [],
      input: 'cannot fetch https://bob:s3cret@example.org/openapi.json: 401',
      want: 'cannot fetch https://example.org/openapi.json: 401',
    },
    {
      name: 'URL user-info in JSON',
      reason: 'the user-info ends at a quote: the next field is left alone',
      secrets: [],
      input: '{"url":"http://tok@h/x","mail":"a@b.c"}',
      want: '{"url":"http://h/x","mail":"a@b.c"}',
    },
    {
      name: 'no user-info',
      reason: 'an @ later in a URL is not user-info',
      secrets: [],
      input: 'see http://host/users/@me and mail a@b.c',
      want: 'see http://host/users/@me and mail a@b.c',
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, () => {
      const r = new Redactor();
      for (const s of c.secrets) r.add(s);
      for (const u of c.urls ?? []) r.addUrlCredentials(u);
      expect(r.text(c.input)).toBe(c.want);
    });
  }

  it('knows nothing until told: text without secrets is kept', () => {
    expect(new Redactor().text('nothing to hide')).toBe('nothing to hide');
  });

  it('the two markers share no run of 4 characters, so one of them always stays clean', () => {
    const grams = (s: string) =>
      new Set([...Array(s.length - 3).keys()].map((i) => s.slice(i, i + 4)));
    const a = grams(REDACTED + REDACTED);
    expect([...grams(REDACTED_ALT + REDACTED_ALT)].filter((g) => a.has(g))).toEqual([]);
  });
});

describe('Redactor.add', () => {
  it('takes every string inside a value the platform returned, and ignores other scalars', () => {
    const r = new Redactor();
    r.add({ key: 'nested-secret', list: ['in-a-list'], n: 123456, b: true, nil: null });
    expect(r.text('nested-secret in-a-list 123456')).toBe(`${REDACTED} ${REDACTED} 123456`);
  });
});

describe('Redactor.value', () => {
  it('redacts every string, keys included, and copies only what changed', () => {
    const r = new Redactor();
    r.add('tok-12345');
    const untouched = { a: [1, 'x'], b: { c: 'y' } };
    const input = { untouched, msg: 'bad tok-12345', list: ['tok-12345'], ['tok-12345']: 1 };
    const out = r.value(input);
    expect(out).toEqual({
      untouched,
      msg: `bad ${REDACTED}`,
      list: [REDACTED],
      [REDACTED]: 1,
    });
    expect(out.untouched).toBe(untouched);
    expect(r.value(untouched)).toBe(untouched);
  });

  it('keeps a __proto__ key as data, never as a prototype', () => {
    const r = new Redactor();
    r.add('tok-12345');
    const input = JSON.parse('{"__proto__": {"polluted": "tok-12345"}}') as Record<string, unknown>;
    const out = r.value(input);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({
      polluted: REDACTED,
    });
  });
});

/**
 * What `Redactor.value` returns, written plainly (every object copied, then compared): the text
 * function on every string and key, arrays and plain objects only.
 */
function redactedPlainly(v: unknown, f: (s: string) => string): unknown {
  if (typeof v === 'string') return f(v);
  if (Array.isArray(v)) return v.map((x) => redactedPlainly(x, f));
  if (v === null || typeof v !== 'object') return v;
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return v;
  const out = Object.create(proto) as Record<string, unknown>;
  for (const [k, x] of Object.entries(v)) {
    Object.defineProperty(out, f(k), {
      value: redactedPlainly(x, f),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** True when `a` and `b` share every object that `value` did not need to change. */
function sharesUnchanged(input: unknown, out: unknown, f: (s: string) => string): boolean {
  if (input === null || typeof input !== 'object') return true;
  const changed = JSON.stringify(redactedPlainly(input, f)) !== JSON.stringify(input);
  if (!changed) return out === input;
  if (Array.isArray(input)) {
    return (input as unknown[]).every((x, i) => sharesUnchanged(x, (out as unknown[])[i], f));
  }
  return Object.keys(input).every(
    (k) =>
      f(k) !== k ||
      sharesUnchanged(
        (input as Record<string, unknown>)[k],
        (out as Record<string, unknown>)[k],
        f,
      ),
  );
}

describe('Redactor.value (property)', () => {
  it('equals the plain copy-everything redaction, and copies only what changed', () => {
    const secret = 'tok-12345';
    const leaf = fc.oneof(
      fc.jsonValue({ maxDepth: 1 }),
      fc.constantFrom(secret, `a ${secret} b`, 'x@y', 'https://u:p@h/'),
    );
    const key = fc.oneof(
      fc.string({ maxLength: 4 }),
      fc.constant(secret),
      fc.constant('__proto__'),
    );
    const value = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        leaf,
        fc.array(tie('v'), { maxLength: 4 }),
        fc.sparseArray(tie('v'), { maxLength: 4 }),
        fc.dictionary(key, tie('v'), { maxKeys: 4 }),
      ),
    })).v;
    fc.assert(
      fc.property(value, (input) => {
        const r = new Redactor();
        r.add(secret);
        const f = (s: string): string => r.text(s);
        const out = r.value(input);
        expect(out).toStrictEqual(redactedPlainly(input, f));
        expect(sharesUnchanged(input, out, f)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

/** Every key, string and number of a JSON value, as text. */
function leavesOf(v: unknown, into: string[] = []): string[] {
  if (typeof v === 'string' || typeof v === 'number') into.push(String(v));
  else if (Array.isArray(v)) for (const x of v) leavesOf(x, into);
  else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      into.push(k);
      leavesOf(x, into);
    }
  }
  return into;
}

describe('Redactor.json', () => {
  const cases: { reason: string; secret: string; value: unknown; indent?: number; want: string }[] =
    [
      {
        reason: 'nothing to redact: the plain serialisation, indented as asked',
        secret: 'unrelated-secret',
        value: { list: [1, 'two', { three: null }] },
        indent: 2,
        want: JSON.stringify({ list: [1, 'two', { three: null }] }, null, 2),
      },
      {
        reason: 'a secret inside a string value',
        secret: 's3cr3t-value',
        value: { note: 'the password is s3cr3t-value' },
        want: `{"note":"the password is ${REDACTED}"}`,
      },
      {
        reason: 'a secret that spans JSON punctuation when written raw stays valid JSON',
        secret: '","b":"',
        value: { a: 'x', b: 'y', c: 'say ","b":" here' },
        want: `{"a":"x","b":"y","c":"say ${REDACTED} here"}`,
      },
      {
        reason: 'a number that holds the secret is written as the marker',
        secret: '98765432',
        value: { pin: 98765432, other: 1 },
        want: `{"pin":"${REDACTED}","other":1}`,
      },
      {
        reason: 'a key that holds the secret, and a __proto__ key kept as data',
        secret: 'tok-12345',
        value: JSON.parse('{"tok-12345":1,"__proto__":{"x":"tok-12345"}}') as unknown,
        want: `{"${REDACTED}":1,"__proto__":{"x":"${REDACTED}"}}`,
      },
      {
        reason: "a URL's user-info with no secret registered",
        secret: 'unrelated-secret',
        value: { url: 'https://bob:hunter22@example.org/x' },
        want: '{"url":"https://example.org/x"}',
      },
      {
        reason: 'an object with toJSON (a Date, a class) is redacted as it serialises',
        secret: 'inside-a-class',
        value: { at: new Date(0), c: { toJSON: () => ({ k: 'inside-a-class' }) } },
        want: `{"at":"1970-01-01T00:00:00.000Z","c":{"k":"${REDACTED}"}}`,
      },
      { reason: 'undefined is null', secret: 'whatever', value: undefined, want: 'null' },
    ];
  it.each(cases)('$reason', ({ secret, value, indent, want }) => {
    const r = new Redactor();
    r.add(secret);
    expect(r.json(value, indent)).toBe(want);
  });

  it('is always valid JSON whose every key and leaf is free of the secret (property)', () => {
    // The secret is cut out of the value's own JSON text, so it often spans punctuation.
    const arb = fc.jsonValue({ maxDepth: 3 }).chain((v) => {
      const text = JSON.stringify(v);
      return fc.tuple(
        fc.constant(v),
        text.length < MIN_SECRET_LENGTH
          ? fc.constant('no-such-secret')
          : fc
              .integer({ min: 0, max: text.length - MIN_SECRET_LENGTH })
              .chain((i) =>
                fc
                  .integer({ min: MIN_SECRET_LENGTH, max: Math.min(12, text.length - i) })
                  .map((n) => text.slice(i, i + n)),
              ),
      );
    });
    fc.assert(
      fc.property(arb, ([value, secret]) => {
        const r = new Redactor();
        r.add(secret);
        const out = r.json(value, 2);
        for (const leaf of leavesOf(JSON.parse(out))) {
          expect(leaf.includes(secret), `${leaf} holds ${secret}`).toBe(false);
        }
        // Nothing redacted in the leaves: the output is the plain serialisation.
        if (leavesOf(value).every((leaf) => r.text(leaf) === leaf)) {
          expect(out).toBe(JSON.stringify(value, null, 2));
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('displayUrl and urlCredentials', () => {
  const cases: { url: string; want: string }[] = [
    { url: 'https://user:pass@example.org/api', want: 'https://example.org/api' },
    { url: 'https://token@example.org', want: 'https://example.org' },
    { url: 'http://u:p@ss@127.0.0.1:8080/x?y=a@b', want: 'http://127.0.0.1:8080/x?y=a@b' },
    { url: 'http://example.org/a@b', want: 'http://example.org/a@b' },
    { url: './specs/api.yaml', want: './specs/api.yaml' },
  ];
  for (const c of cases) {
    it(`${c.url} is shown as ${c.want}`, () => expect(displayUrl(c.url)).toBe(c.want));
  }
  it('reads a URL’s credentials decoded, and none without a password', () => {
    expect(urlCredentials('https://bob:p%40ss@h/')).toEqual({ user: 'bob', password: 'p@ss' });
    expect(urlCredentials('https://bob@h/')).toBeUndefined();
    expect(urlCredentials('not a url')).toBeUndefined();
  });
});

// A property check with a seeded generator: for any secrets of at least MIN_SECRET_LENGTH
// characters and any text that contains them (as is or encoded, next to markers and to each other),
// the redacted text contains none of them in any form. The alphabet is small and full of the
// markers' own characters on purpose, so secrets overlap each other and the markers often.
describe('Redactor property: a registered secret never survives', () => {
  const ALPHABET = [...'«»redactsx%+/= "\\@:é😀'];
  const seeds = Array.from({ length: 400 }, (_, i) => i + 1);

  it('holds for 400 random cases', () => {
    for (const seed of seeds) {
      const rnd = mulberry32(seed);
      const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
      const str = (lo: number, hi: number) =>
        Array.from({ length: int(lo, hi) }, () => ALPHABET[int(0, ALPHABET.length - 1)]!).join('');
      // Often a secret starts or ends with part of a marker, or lies inside one.
      const markers = REDACTED + REDACTED_ALT + REDACTED;
      const secret = () => {
        const cut = int(0, markers.length - 1);
        const k = int(0, 3);
        const s =
          k === 0
            ? markers.slice(cut, cut + int(1, 8)) + str(0, 4)
            : k === 1
              ? str(0, 4) + markers.slice(cut, cut + int(1, 8))
              : str(MIN_SECRET_LENGTH, 12);
        return s.length >= MIN_SECRET_LENGTH ? s : s + str(MIN_SECRET_LENGTH, MIN_SECRET_LENGTH);
      };
      const secrets = Array.from({ length: int(1, 3) }, secret);
      const forms = secrets.flatMap((s) => [
        s,
        encodeURIComponent(s),
        JSON.stringify(s).slice(1, -1),
        b64(s),
      ]);
      const pieces = Array.from({ length: int(1, 8) }, () => {
        const k = int(0, 3);
        if (k === 0) return forms[int(0, forms.length - 1)]!;
        if (k === 1) return [REDACTED, REDACTED_ALT][int(0, 1)]!;
        return str(0, 6);
      });
      const text = pieces.join('') + secrets[0]!;
      const r = new Redactor();
      for (const s of secrets) r.add(s);
      const out = r.text(text);
      for (const s of secrets) {
        const leaked = [s, encodeURIComponent(s), JSON.stringify(s).slice(1, -1), b64(s)].filter(
          (f) => f.length >= MIN_SECRET_LENGTH && out.includes(f),
        );
        expect(leaked, `seed ${seed}: ${JSON.stringify({ secrets, text, out })}`).toEqual([]);
      }
    }
  });
});

/** A small seeded PRNG (mulberry32): the same seed gives the same cases on every run. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
