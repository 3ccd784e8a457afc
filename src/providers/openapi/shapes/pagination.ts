import { TendError, setKey } from '../../../core/index.js';
import { hasType, isObject, objectView } from '../fields/schema-view.js';

/**
 * How a list operation pages its answer, inferred from the document or declared with
 * `x-tend-pagination` on the list GET. Every style is followed with a bound on pages and items.
 *
 * - `page`: a page number in `param` (from `start`, default 1), optionally a page size in `sizeParam`;
 * - `offset`: an item offset in `param`, optionally a page size in `sizeParam`;
 * - `cursor`: the body's `next` field (a dotted path) holds the value to send in `param`;
 * - `link`: the `Link` header's `rel="next"` URL (RFC 8288);
 * - `next`: the body's `next` field (a dotted path) holds the next page's URL.
 */
export type Pagination =
  | (PageBounds & {
      readonly style: 'page';
      readonly param: string;
      readonly sizeParam?: string;
      readonly size?: number;
      /** A page shorter than `size` is the last (see `shortPageEnds`). */
      readonly shortPageEnds?: boolean;
      readonly start: number;
    })
  | (PageBounds & {
      readonly style: 'offset';
      readonly param: string;
      readonly sizeParam?: string;
      readonly size?: number;
      readonly shortPageEnds?: boolean;
    })
  | (PageBounds & { readonly style: 'cursor'; readonly param: string; readonly next: string })
  | (PageBounds & { readonly style: 'link' })
  | (PageBounds & { readonly style: 'next'; readonly next: string });

/** The bound every pagination is followed with. */
export interface PageBounds {
  readonly maxPages: number;
  readonly maxItems: number;
}

/** The pagination styles `x-tend-pagination` takes. */
export const PAGINATION_STYLES = ['page', 'offset', 'cursor', 'link', 'next'] as const;

/** Default bounds: generous for real inventories, small enough to stop a runaway server. */
export const DEFAULT_PAGE_BOUNDS: PageBounds = { maxPages: 1_000, maxItems: 100_000 };

/** The page size Tend asks for when it may choose one (capped by the parameter's `maximum`). */
const PREFERRED_SIZE = 100;

const FIELD_PATH = /^[A-Za-z0-9_$@-]+(\.[A-Za-z0-9_$@-]+)*$/;
const PARAM_NAME = /^[A-Za-z0-9_.\-[\]]+$/;

/** A query parameter of a list operation, as far as inference needs it. */
interface QueryParam {
  readonly name: string;
  readonly schema: unknown;
}

/**
 * The pagination `x-tend-pagination` declares, or a string saying what is wrong with it (the caller
 * turns it into a warning naming the type). `false` or `none` declares that the list is not paged.
 */
export function readPagination(value: unknown): Pagination | null | string {
  if (value === false || value === 'none') return null;
  if (!isObject(value)) {
    return `x-tend-pagination must be a mapping with a style (${PAGINATION_STYLES.join(', ')}), or none`;
  }
  const style = value['style'];
  const bounds = readBounds(value);
  if (typeof bounds === 'string') return bounds;
  const str = (key: string, re: RegExp, fallback?: string): string | undefined | Error => {
    const v = value[key] ?? fallback;
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || !re.test(v)) {
      return new Error(
        `x-tend-pagination.${key} must be ${re === FIELD_PATH ? 'a field name or dotted path' : 'a query parameter name'}, not ${JSON.stringify(v)}`,
      );
    }
    return v;
  };
  const size = value['size'];
  if (size !== undefined && !(Number.isInteger(size) && (size as number) > 0)) {
    return `x-tend-pagination.size must be a positive integer, not ${JSON.stringify(size)}`;
  }
  const sizeParam = str('sizeParam', PARAM_NAME);
  switch (style) {
    case 'page':
    case 'offset': {
      const param = str('param', PARAM_NAME, style);
      if (param instanceof Error) return param.message;
      if (sizeParam instanceof Error) return sizeParam.message;
      const start = value['start'] ?? 1;
      if (style === 'page' && !(Number.isInteger(start) && (start as number) >= 0)) {
        return `x-tend-pagination.start must be 0 or a positive integer, not ${JSON.stringify(start)}`;
      }
      const common = {
        param: param!,
        ...(sizeParam !== undefined ? { sizeParam } : {}),
        // A size the overlay states is one the platform honours: a shorter page is the last.
        ...(typeof size === 'number' ? { size, shortPageEnds: true } : {}),
        ...bounds,
      };
      return style === 'page' ? { style, ...common, start: start as number } : { style, ...common };
    }
    case 'cursor': {
      const param = str('param', PARAM_NAME, 'cursor');
      const next = str('next', FIELD_PATH);
      if (param instanceof Error) return param.message;
      if (next instanceof Error) return next.message;
      if (next === undefined) {
        return 'x-tend-pagination with style cursor needs next: the response field holding the next cursor (e.g. next_cursor or meta.next)';
      }
      return { style, param: param!, next, ...bounds };
    }
    case 'link':
      return { style, ...bounds };
    case 'next': {
      const next = str('next', FIELD_PATH, 'next');
      if (next instanceof Error) return next.message;
      return { style, next: next!, ...bounds };
    }
    default:
      return `x-tend-pagination.style must be one of ${PAGINATION_STYLES.join(', ')}, not ${JSON.stringify(style)}`;
  }
}

function readBounds(value: Record<string, unknown>): PageBounds | string {
  const out: { maxPages: number; maxItems: number } = { ...DEFAULT_PAGE_BOUNDS };
  for (const key of ['maxPages', 'maxItems'] as const) {
    const v = value[key];
    if (v === undefined) continue;
    if (!Number.isInteger(v) || (v as number) < 1) {
      return `x-tend-pagination.${key} must be a positive integer, not ${JSON.stringify(v)}`;
    }
    out[key] = v as number;
  }
  return out;
}

const CURSOR_PARAMS = [
  'cursor',
  'page_token',
  'pagetoken',
  'next_token',
  'nexttoken',
  'continuation_token',
  'continuationtoken',
  'continue',
  'starting_after',
  'after',
];
const CURSOR_FIELD =
  /^(next_?(cursor|page_?token|token|marker)|cursor_?next|continuation_?token|continue|end_?cursor)$/i;
const NEXT_URL_FIELD = /^(next|next_?url|next_?link|next_?page_?url)$/i;
const PAGE_PARAMS = ['page', 'page_number', 'pagenumber', 'pageno'];
const OFFSET_PARAMS = ['offset', 'skip'];
const SIZE_PARAMS = ['per_page', 'perpage', 'page_size', 'pagesize', 'limit', 'size', 'count'];
const METADATA_OBJECTS = [
  'meta',
  'metadata',
  'pagination',
  'paging',
  'page_info',
  'pageinfo',
  'links',
  '_links',
  'response_metadata',
];

/**
 * Infers the pagination of a list operation from its query parameters, the fields of its success
 * response and its response headers. In order: a `Link` response header; a next URL in the body; a
 * cursor parameter with a next-cursor field in the body; a page number; an offset. A string says
 * why the operation looks paged but cannot be followed (inspect shows it with what to declare);
 * undefined: no sign of paging.
 */
export function inferPagination(
  queryParams: readonly QueryParam[],
  responseSchema: unknown,
  responseHeaders: readonly string[],
): Pagination | string | undefined {
  const bounds = DEFAULT_PAGE_BOUNDS;
  const byLower = new Map(queryParams.map((p) => [p.name.toLowerCase(), p]));
  const pick = (names: readonly string[]) =>
    names.map((n) => byLower.get(n)).find((p) => p !== undefined);

  if (responseHeaders.some((h) => h.toLowerCase() === 'link')) return { style: 'link', ...bounds };
  const fields = bodyFields(responseSchema);
  const nextUrl = fields.find(
    (f) => NEXT_URL_FIELD.test(f.name) && (hasType(f.schema, 'string') || f.schema === undefined),
  );
  const cursorParam = pick(CURSOR_PARAMS);
  const cursorField = fields.find((f) => CURSOR_FIELD.test(f.name));
  if (cursorParam !== undefined && cursorField !== undefined) {
    return { style: 'cursor', param: cursorParam.name, next: cursorField.path, ...bounds };
  }
  if (nextUrl !== undefined) return { style: 'next', next: nextUrl.path, ...bounds };
  const sizeParam = pick(SIZE_PARAMS);
  const size = sizeParam ? preferredSize(sizeParam.schema) : undefined;
  // A short page ends the list only when the size asked is the documented maximum: a platform may
  // cap an undocumented size lower, and stopping there would silently drop objects.
  const documented =
    size !== undefined && isObject(sizeParam?.schema) && sizeParam.schema['maximum'] === size;
  const sized = {
    ...(sizeParam ? { sizeParam: sizeParam.name } : {}),
    ...(size !== undefined ? { size } : {}),
    ...(documented ? { shortPageEnds: true } : {}),
  };
  const page = pick(PAGE_PARAMS);
  if (page !== undefined) {
    const min = isObject(page.schema) ? page.schema['minimum'] : undefined;
    const start = min === 0 ? 0 : 1;
    return { style: 'page', param: page.name, ...sized, start, ...bounds };
  }
  const offset = pick(OFFSET_PARAMS);
  if (offset !== undefined) return { style: 'offset', param: offset.name, ...sized, ...bounds };
  if (cursorParam !== undefined) {
    return `the list takes a ${cursorParam.name} parameter, but its answer has no field that looks like the next cursor; declare x-tend-pagination: {style: cursor, param: ${cursorParam.name}, next: <field>}`;
  }
  return undefined;
}

/** The page size to ask for: 100, or the parameter's documented maximum when it is smaller. */
function preferredSize(schema: unknown): number | undefined {
  if (!isObject(schema)) return PREFERRED_SIZE;
  const max = schema['maximum'];
  return typeof max === 'number' && max >= 1
    ? Math.min(PREFERRED_SIZE, Math.floor(max))
    : PREFERRED_SIZE;
}

/** Top-level fields of a response body, and those of its metadata objects (`meta.next_cursor`). */
function bodyFields(schema: unknown): { name: string; path: string; schema: unknown }[] {
  const view = objectView(schema);
  const out: { name: string; path: string; schema: unknown }[] = [];
  for (const [name, prop] of Object.entries(view.properties)) {
    out.push({ name, path: name, schema: prop });
  }
  for (const [name, prop] of Object.entries(view.properties)) {
    if (!METADATA_OBJECTS.includes(name.toLowerCase())) continue;
    for (const [inner, p] of Object.entries(objectView(prop).properties)) {
      // HAL: `_links.next.href`.
      const href = objectView(p).properties['href'];
      if (href !== undefined)
        out.push({ name: inner, path: `${name}.${inner}.href`, schema: href });
      else out.push({ name: inner, path: `${name}.${inner}`, schema: p });
    }
  }
  return out;
}

/** The value at a dotted path of an answer. */
export function valueAt(body: unknown, path: string): unknown {
  let cur: unknown = body;
  for (const part of path.split('.')) {
    if (!isObject(cur) || !Object.hasOwn(cur, part)) return undefined;
    cur = cur[part];
  }
  return cur;
}

/**
 * The `rel="next"` target of a `Link` header (RFC 8288), or undefined. Tolerates several links in
 * one header, quoted and unquoted parameters and several relation types in one `rel`; never throws.
 */
export function nextLink(header: string | null | undefined): string | undefined {
  if (header === null || header === undefined || header.length > 64 * 1024) return undefined;
  let i = 0;
  const n = header.length;
  while (i < n) {
    const lt = header.indexOf('<', i);
    if (lt < 0) return undefined;
    const gt = header.indexOf('>', lt + 1);
    if (gt < 0) return undefined;
    const target = header.slice(lt + 1, gt).trim();
    // Parameters run to the next link (a comma outside quotes) or the end; `;` outside quotes
    // separates them.
    let j = gt + 1;
    let inQuotes = false;
    const params: string[] = [''];
    for (; j < n; j++) {
      const c = header[j]!;
      if (c === '"') {
        inQuotes = !inQuotes;
        continue;
      }
      if (c === '\\' && inQuotes) {
        params[params.length - 1] += header[j + 1] ?? '';
        j++;
        continue;
      } else if (c === ',' && !inQuotes) break;
      else if (c === ';' && !inQuotes) {
        params.push('');
        continue;
      }
      params[params.length - 1] += c;
    }
    for (const part of params) {
      const eq = part.indexOf('=');
      if (eq < 0) continue;
      const key = part.slice(0, eq).trim().toLowerCase();
      if (key !== 'rel') continue;
      const rels = part
        .slice(eq + 1)
        .trim()
        .toLowerCase()
        .split(/\s+/);
      if (rels.includes('next')) return target;
    }
    i = j + 1;
  }
  return undefined;
}

/** One page as the pager needs it: the items, the raw body and the response headers. */
export interface PageAnswer {
  readonly items: readonly unknown[];
  readonly body: unknown;
  readonly headers: { get(name: string): string | null };
}

/** Where the next page is: the same path with other query values, or a URL to follow. */
export type PageRequest =
  | { readonly kind: 'query'; readonly query: Readonly<Record<string, string | number>> }
  | { readonly kind: 'url'; readonly url: string };

/**
 * Follows a pagination from the first page to the last and returns every item, in order. `get`
 * fetches one page. Stops at an empty page, a page shorter than a size the platform is known to honour, a missing
 * next cursor or link; fails with `provider.pagination_loop` when the platform sends a cursor, link
 * or page it already sent (it would never end), and with `provider.pagination_bound` past the
 * bound on pages or items, naming the type and how to raise the bound.
 */
export async function collectPages(
  typeName: string,
  pagination: Pagination | undefined,
  get: (request: PageRequest | undefined) => Promise<PageAnswer>,
): Promise<unknown[]> {
  const first = firstRequest(pagination);
  const firstPage = await get(first);
  if (pagination === undefined) return [...firstPage.items];
  const items: unknown[] = [];
  const seen = new Set<string>();
  let page = firstPage;
  let request = first;
  let pages = 1;
  let previous: string | undefined;
  for (;;) {
    for (const item of page.items) items.push(item);
    if (items.length > pagination.maxItems) {
      throw boundError(typeName, `more than ${pagination.maxItems} objects`, 'maxItems');
    }
    // A platform that ignores the page parameter answers the same page again: never-ending.
    const fingerprint = page.items.length > 0 ? JSON.stringify(page.items) : undefined;
    if (fingerprint !== undefined && fingerprint === previous) {
      throw loopError(typeName, 'the same page twice in a row');
    }
    previous = fingerprint;
    const next = nextRequest(pagination, page, request);
    if (next === undefined) return items;
    const key = JSON.stringify(next);
    if (seen.has(key)) {
      throw loopError(
        typeName,
        next.kind === 'url'
          ? `the next link ${next.url} again`
          : `the cursor ${JSON.stringify(next.query)} again`,
      );
    }
    seen.add(key);
    if (pages >= pagination.maxPages) {
      throw boundError(typeName, `more than ${pagination.maxPages} pages`, 'maxPages');
    }
    request = next;
    page = await get(next);
    pages++;
  }
}

function firstRequest(p: Pagination | undefined): PageRequest | undefined {
  if (p === undefined) return undefined;
  const size = p.style === 'page' || p.style === 'offset' ? sizeQuery(p) : {};
  if (p.style === 'page') return { kind: 'query', query: { [p.param]: p.start, ...size } };
  if (p.style === 'offset') return { kind: 'query', query: { [p.param]: 0, ...size } };
  return undefined;
}

function sizeQuery(p: { sizeParam?: string; size?: number }): Record<string, number> {
  return p.sizeParam !== undefined && p.size !== undefined ? { [p.sizeParam]: p.size } : {};
}

function nextRequest(
  p: Pagination,
  page: PageAnswer,
  request: PageRequest | undefined,
): PageRequest | undefined {
  switch (p.style) {
    case 'page':
    case 'offset': {
      if (page.items.length === 0) return undefined;
      const asked = p.sizeParam !== undefined && p.shortPageEnds === true ? p.size : undefined;
      if (asked !== undefined && page.items.length < asked) return undefined;
      const current = request?.kind === 'query' ? Number(request.query[p.param]) : 0;
      const value = p.style === 'page' ? current + 1 : current + page.items.length;
      return { kind: 'query', query: { [p.param]: value, ...sizeQuery(p) } };
    }
    case 'cursor': {
      const cursor = valueAt(page.body, p.next);
      if (typeof cursor === 'number') return { kind: 'query', query: { [p.param]: cursor } };
      if (typeof cursor !== 'string' || cursor === '' || page.items.length === 0) return undefined;
      return { kind: 'query', query: { [p.param]: cursor } };
    }
    case 'link': {
      const url = nextLink(page.headers.get('link'));
      return url === undefined || url === '' ? undefined : { kind: 'url', url };
    }
    case 'next': {
      const url = valueAt(page.body, p.next);
      return typeof url === 'string' && url !== '' ? { kind: 'url', url } : undefined;
    }
  }
}

function loopError(typeName: string, what: string): TendError {
  return new TendError(
    'provider.pagination_loop',
    `listing ${typeName}: the platform sent ${what}; stopped, since following it would never end. Its paging does not work as inferred: declare x-tend-pagination on the list operation in an overlay (tend providers inspect shows what was inferred)`,
    { retryable: false },
  );
}

function boundError(typeName: string, what: string, key: 'maxPages' | 'maxItems'): TendError {
  return new TendError(
    'provider.pagination_bound',
    `listing ${typeName}: ${what}, past the bound Tend follows a list to; if that many are real, raise it with x-tend-pagination: {…, ${key}: <n>} on the list operation`,
    { retryable: false },
  );
}

/**
 * A next-page URL as a path below the base URL and its query, or a TendError when it leads
 * elsewhere: credentials are never sent to another origin, or outside the API's base path.
 */
export function pageUrlRequest(
  typeName: string,
  url: string,
  baseUrl: string,
): { path: string; query: Record<string, string> } {
  let target: URL;
  let base: URL;
  try {
    base = new URL(baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
    target = new URL(url, base);
  } catch {
    throw new TendError(
      'provider.bad_response',
      `listing ${typeName}: the next page link ${JSON.stringify(url.slice(0, 200))} is not a URL`,
      { retryable: false },
    );
  }
  const basePath = base.pathname.replace(/\/+$/, '');
  if (
    target.origin !== base.origin ||
    !(target.pathname === basePath || target.pathname.startsWith(`${basePath}/`))
  ) {
    throw new TendError(
      'provider.bad_response',
      `listing ${typeName}: the next page link leads to ${target.origin}${target.pathname}, outside the endpoint ${base.origin}${basePath}; Tend does not follow it (credentials stay with the endpoint)`,
      { retryable: false },
    );
  }
  const query: Record<string, string> = {};
  for (const [k, v] of target.searchParams)
    setKey(query, k, v, `the next page link of ${typeName}`);
  return { path: target.pathname.slice(basePath.length) || '/', query };
}
