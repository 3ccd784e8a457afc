import { TendError } from '../../../core/index.js';
import type { DerivedType } from '../derive-types.js';
import { isAbsent } from '../fields/object-annotations.js';
import { isObject } from '../fields/schema-view.js';
import type { Scope } from '../object-ids.js';
import { fillPath } from '../object-ids.js';
import type { PageAnswer, PageRequest } from '../shapes/pagination.js';
import { collectPages, pageUrlRequest } from '../shapes/pagination.js';
import { pickListed, pickListedByKey } from '../shapes/read-by-list.js';
import { badResponse, isEmpty, listItems, unwrapAnswer } from './answers.js';
import type { AccessContext } from './context.js';
import { aliased, fillItemPath } from './requests.js';

// The two reads every shape is built on: one object at its address (or picked from its list), and
// every item of one list across its pages.

/** One object as the platform answered it, out of its envelope, with the ETag it came with. */
export interface RawObject {
  readonly body: Record<string, unknown>;
  readonly etag?: string;
}

/**
 * One object of a type in a scope, read at its item path (or from the list, `t.readByList`);
 * undefined when it is absent (404, or empty/absent as the type's annotations say).
 */
export async function readRaw(
  ctx: AccessContext,
  t: DerivedType,
  scope: Scope,
  own: string | readonly string[],
  signal?: AbortSignal,
): Promise<RawObject | undefined> {
  if (t.readByList !== undefined) return readFromList(ctx, t, scope, own, signal);
  const path = fillItemPath(t.operations.read.path, aliased(t, scope), own);
  try {
    const r = await ctx.http.request({ method: 'GET', path, ...(signal ? { signal } : {}) });
    const answer = unwrapAnswer(ctx, t, t.envelope?.read, r.body, `GET ${t.operations.read.path}`);
    if (!isObject(answer)) throw badResponse(`GET ${path}`, 'an object', r.body);
    for (const f of t.absentWhenEmpty) if (isEmpty(answer[f])) return undefined;
    if (isAbsent(t.absentWhen, answer)) return undefined;
    const etag = r.headers.get('etag') ?? undefined;
    return { body: answer, ...(etag ? { etag } : {}) };
  } catch (e) {
    if (e instanceof TendError && e.code === 'http.not_found') return undefined;
    throw e;
  }
}

/**
 * One object of a type whose item path has no GET: the collection's list (every page, out of its
 * envelope), and the entry whose id field is the id; none, or no list (404), is absent.
 */
async function readFromList(
  ctx: AccessContext,
  t: DerivedType,
  scope: Scope,
  own: string | readonly string[],
  signal?: AbortSignal,
): Promise<RawObject | undefined> {
  let items: unknown[];
  try {
    items = await listAllPages(ctx, t, scope, signal);
  } catch (e) {
    if (e instanceof TendError && e.code === 'http.not_found') return undefined;
    throw e;
  }
  const found = t.itemKey
    ? pickListedByKey(
        items,
        t.itemKey.map((k) => k.field),
        typeof own === 'string' ? [own] : own,
      )
    : pickListed(items, t.info.idField, typeof own === 'string' ? own : own[0]!);
  if (found === undefined) return undefined;
  for (const f of t.absentWhenEmpty) if (isEmpty(found[f])) return undefined;
  if (isAbsent(t.absentWhen, found)) return undefined;
  return { body: found };
}

/**
 * Every item of one list, across its pages (`t.pagination`, followed with its bound), each page
 * taken out of its envelope (`t.listShape`).
 */
export async function listAllPages(
  ctx: AccessContext,
  t: DerivedType,
  scope: Scope,
  signal?: AbortSignal,
): Promise<unknown[]> {
  const path = fillPath(t.operations.list.path, aliased(t, scope));
  const getPage = async (next: PageRequest | undefined): Promise<PageAnswer> => {
    let req: { path: string; query?: Record<string, string | number> } = { path };
    if (next?.kind === 'query') req = { path, query: { ...next.query } };
    else if (next?.kind === 'url') {
      if (ctx.baseUrl === undefined) {
        throw new TendError(
          'provider.internal',
          `listing ${t.info.name}: a next-page link, but no endpoint to check it against`,
        );
      }
      req = pageUrlRequest(t.info.name, next.url, ctx.baseUrl);
    }
    const r = await ctx.http.request({ method: 'GET', ...req, ...(signal ? { signal } : {}) });
    const items = listItems(t, r.body);
    if (items === undefined) throw badResponse(`GET ${req.path}`, 'a list of objects', r.body);
    return { items, body: r.body, headers: r.headers };
  };
  return collectPages(t.info.name, t.pagination, getPage);
}
