import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TendError } from '../../../core/index.js';
import { collectPages, nextLink, pageUrlRequest } from './pagination.js';

describe('nextLink (RFC 8288 Link header)', () => {
  it.each([
    ['<https://a/x?p=2>; rel="next"', 'https://a/x?p=2'],
    ['<https://a/x?p=2>; rel=next', 'https://a/x?p=2'],
    ['<https://a/1>; rel="prev", <https://a/3>; rel="next"', 'https://a/3'],
    ['<https://a/3>; rel="next last"', 'https://a/3'],
    ['<https://a/3>; title="a, b; rel=next"; rel="last"', undefined],
    ['<https://a/3>; REL="Next"', 'https://a/3'],
    ['<https://a/3>; rel="last"', undefined],
    ['', undefined],
    [null, undefined],
    ['<unterminated; rel="next"', undefined],
  ])('%j → %j', (header, want) => {
    expect(nextLink(header)).toBe(want);
  });

  const url = fc.webUrl().filter((u) => !/[<>,;"\s]/.test(u));
  it('finds the next link among any others, in any order (property)', () => {
    fc.assert(
      fc.property(
        url,
        fc.array(fc.tuple(url, fc.constantFrom('prev', 'last', 'first'))),
        fc.nat(),
        (next, others, at) => {
          const links = others.map(([u, r]) => `<${u}>; rel="${r}"`);
          links.splice(at % (links.length + 1), 0, `<${next}>; rel="next"`);
          expect(nextLink(links.join(', '))).toBe(next);
        },
      ),
    );
  });

  it('never throws, whatever the header (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (h) => {
        const got = nextLink(h);
        expect(got === undefined || typeof got === 'string').toBe(true);
      }),
    );
  });
});

describe('collectPages', () => {
  it('without pagination: the one answer', async () => {
    const got = await collectPages('t', undefined, () =>
      Promise.resolve({ items: [1, 2], body: [1, 2], headers: new Headers() }),
    );
    expect(got).toEqual([1, 2]);
  });

  it('keeps the order of items across pages (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.integer(), { minLength: 1, maxLength: 5 }), { maxLength: 8 }),
        async (pages) => {
          const got = await collectPages(
            't',
            { style: 'cursor', param: 'c', next: 'next', maxPages: 100, maxItems: 1000 },
            (req) => {
              const i = req?.kind === 'query' ? Number(req.query['c']) : 0;
              const items = pages[i] ?? [];
              return Promise.resolve({
                items,
                body: { next: i + 1 < pages.length ? String(i + 1) : null },
                headers: new Headers(),
              });
            },
          );
          expect(got).toEqual(pages.flat());
        },
      ),
    );
  });
});

describe('pageUrlRequest', () => {
  it('turns a link below the endpoint into a path and query', () => {
    expect(pageUrlRequest('t', '/api/v1/things?page=2&size=5', 'http://h:1/api/v1')).toEqual({
      path: '/things',
      query: { page: '2', size: '5' },
    });
  });

  it.each([
    [
      'http://evil:1/api/v1/things',
      'leads to http://evil:1/api/v1/things, outside the endpoint http://h:1/api/v1',
    ],
    [
      '/api/v10/things',
      'leads to http://h:1/api/v10/things, outside the endpoint http://h:1/api/v1',
    ],
    ['http://[bad', 'is not a URL'],
  ])('refuses %s', (link, message) => {
    let err: unknown;
    try {
      pageUrlRequest('things', link, 'http://h:1/api/v1');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TendError);
    expect((err as TendError).message).toContain(message);
  });

  it('refuses a query key that would reach a prototype', () => {
    expect(() => pageUrlRequest('t', '/api/x?__proto__=1', 'http://h/api')).toThrow(TendError);
  });
});
