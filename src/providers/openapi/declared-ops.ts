import { isObject } from './schema-view.js';

/**
 * A minimal reading of `x-tend-type` + `x-tend-op` on operations (the shared overlay vocabulary of
 * issue 12, whose full form — any operation of any path assigned to a type — belongs to inference):
 * an item path whose GET says `x-tend-op: read` and whose DELETE says `x-tend-op: delete`, both with
 * `x-tend-type: <name>`, is the item path of the collection whose type is `<name>` even when it is
 * not `<collection>/{id}` (Alertmanager: `/silences` and `/silence/{silenceID}`).
 */
export function declaredItemPaths(
  paths: Readonly<Record<string, Record<string, unknown>>>,
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [path, item] of Object.entries(paths)) {
    if (!/\/\{[^{}]+\}$/.test(path)) continue;
    const get = item['get'];
    const del = item['delete'];
    if (!isObject(get) || !isObject(del)) continue;
    const name = get['x-tend-type'];
    if (typeof name !== 'string' || del['x-tend-type'] !== name) continue;
    if (get['x-tend-op'] !== 'read' || del['x-tend-op'] !== 'delete') continue;
    const list = out.get(name);
    if (list) list.push(path);
    else out.set(name, [path]);
  }
  return out;
}

/** The type name a collection path's operations give it (`x-tend-type` on its POST or GET). */
export function declaredTypeName(collection: Record<string, unknown>): string | undefined {
  for (const method of ['post', 'get']) {
    const o = collection[method];
    if (isObject(o) && typeof o['x-tend-type'] === 'string') return o['x-tend-type'];
  }
  return undefined;
}
