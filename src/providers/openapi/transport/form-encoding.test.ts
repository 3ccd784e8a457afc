import fc from 'fast-check';
import qs from 'qs';
import { describe, expect, it } from 'vitest';
import { TendError } from '../../../core/index.js';
import { encodeForm } from './form-encoding.js';
import { encodeRequestBody, isForm } from './request-media.js';

interface Case {
  readonly name: string;
  readonly reason: string;
  readonly body: Record<string, unknown>;
  readonly want: string;
}

const cases: Case[] = [
  {
    name: 'flat fields',
    reason: 'scalars as text; booleans and numbers as their JSON spelling',
    body: { name: 'web', active: true, amount: 1200 },
    want: 'name=web&active=true&amount=1200',
  },
  {
    name: 'a map',
    reason: 'a nested object in brackets: metadata[key]=v (Stripe, Rack, PHP)',
    body: { metadata: { order: '42', 'tend.address': 'stripe.products/web' } },
    want: 'metadata[order]=42&metadata[tend.address]=stripe.products%2Fweb',
  },
  {
    name: 'an array of objects',
    reason: 'indices in brackets: items[0][price]=p',
    body: { items: [{ price: 'p', quantity: 2 }, { price: 'q' }] },
    want: 'items[0][price]=p&items[0][quantity]=2&items[1][price]=q',
  },
  {
    name: 'an array of strings',
    reason: 'indices in brackets too: expand[0]=a',
    body: { expand: ['a', 'b'] },
    want: 'expand[0]=a&expand[1]=b',
  },
  {
    name: 'characters that split pairs',
    reason: '&, = and % in keys and values are percent-encoded, so no value can add a field',
    body: { 'a&b': 'x=y&z', p: '100%' },
    want: 'a%26b=x%3Dy%26z&p=100%25',
  },
  {
    name: 'clearing',
    reason: 'null, an empty map and an empty list are sent as an empty value: how form APIs unset',
    body: { description: null, metadata: {}, images: [] },
    want: 'description=&metadata=&images=',
  },
  {
    name: 'absent',
    reason: 'an undefined field is not sent',
    body: { name: 'a', gone: undefined },
    want: 'name=a',
  },
  {
    name: 'unicode',
    reason: 'UTF-8, percent-encoded',
    body: { name: 'café ☕' },
    want: 'name=caf%C3%A9%20%E2%98%95',
  },
];

describe('encodeForm', () => {
  it.each(cases)('$name: $reason', ({ body, want }) => {
    expect(encodeForm(body)).toBe(want);
  });

  it.each([
    [
      { 'a[b]': 'x' },
      'the field a[b] cannot be sent in a form: a key holding [ or ] would be read as nesting; rename the key',
    ],
    [
      { m: { 'k]': 'x' } },
      'the field m[k]] cannot be sent in a form: a key holding [ or ] would be read as nesting; rename the key',
    ],
  ])('refuses a key with a bracket: %j', (body, message) => {
    expect(() => encodeForm(body)).toThrow(new TendError('provider.bad_form_body', message));
  });

  it.each([
    [[1, 2], 'a form-encoded request body must be an object of fields, not an array'],
    [null, 'a form-encoded request body must be an object of fields, not null'],
    ['x', 'a form-encoded request body must be an object of fields, not string'],
  ])('refuses a body that is not an object: %j', (body, message) => {
    expect(() => encodeForm(body)).toThrow(message);
  });

  it('reads back as it was sent (qs.parse), for any nesting of non-empty strings', () => {
    // A key of digits alone is left out: `m[0]=x` reads back as a list (the notation's own ambiguity,
    // said in docs/decisions/0014).
    const key = fc
      .string({ minLength: 1, maxLength: 8 })
      .filter(
        (k) =>
          !/[[\]]/.test(k) &&
          !/^\d+$/.test(k) &&
          !['__proto__', 'constructor', 'prototype'].includes(k),
      );
    const value = fc.string({ minLength: 1, maxLength: 12 });
    const tree = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        value,
        fc.array(tie('node'), { minLength: 1, maxLength: 3 }),
        fc.dictionary(key, tie('node'), { minKeys: 1, maxKeys: 3 }),
      ),
    })).node;
    fc.assert(
      fc.property(fc.dictionary(key, tree, { minKeys: 1, maxKeys: 4 }), (body) => {
        const parsed = qs.parse(encodeForm(body), {
          depth: 50,
          arrayLimit: 100,
          plainObjects: true,
        });
        expect(parsed).toEqual(body);
      }),
      { numRuns: 300 },
    );
  });
});

describe('encodeRequestBody', () => {
  it('sends JSON unless the media type is a form', async () => {
    expect(await encodeRequestBody({ a: [1] }, undefined)).toBe('{"a":[1]}');
    expect(await encodeRequestBody({ a: [1] }, 'application/merge-patch+json')).toBe('{"a":[1]}');
    expect(
      await encodeRequestBody({ a: [1] }, 'application/x-www-form-urlencoded; charset=utf-8'),
    ).toBe('a[0]=1');
  });

  it('knows a form by its base media type, whatever the case and parameters', () => {
    expect(isForm('Application/X-WWW-Form-Urlencoded ; charset=utf-8')).toBe(true);
    expect(isForm('multipart/form-data')).toBe(false);
  });
});
