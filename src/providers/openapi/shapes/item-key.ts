import { isNestedKeyPath } from '../../../core/index.js';
import { isIdLike, NAME_LIKE } from '../fields/identity.js';
import { isObject } from '../fields/schema-view.js';

/**
 * Objects addressed by several path parameters together (docs/onboard-rest-api.md, "Objects named by
 * several parameters"): Linode's `/object-storage/buckets/{clusterId}/{bucket}` under
 * `/object-storage/buckets`, LXD's `/1.0/storage-pools/{name}/volumes/{type}/{volume}` under
 * `…/volumes`, PowerDNS's `/servers/{server_id}/autoprimaries/{ip}/{nameserver}`. Each of the item
 * path's own parameters is held by a field of the object (`{clusterId}` by `cluster`); the object's
 * own id is those values together, each URI-encoded and joined by `/` like a nested object's id
 * (object-ids.ts), and decoded back into the path's parameters.
 */

/** One parameter of a composite item key and the field of the object holding its value. */
export interface ItemKeyPart {
  readonly param: string;
  readonly field: string;
  /** How the field was found (for inspect). */
  readonly why: string;
}

/**
 * The item path of a collection whose objects are named by two or more parameters below it
 * (`<collection>/{a}/{b}`, nothing else in between), with a DELETE; undefined when there is none.
 * A path one parameter deep with a DELETE of its own is a plain item path, not this.
 */
export function compositeItemPath(
  collectionPath: string,
  paths: Readonly<Record<string, Record<string, unknown>>>,
): { readonly path: string; readonly params: readonly string[] } | undefined {
  const prefix = collectionPath === '/' ? '' : collectionPath;
  const base = split(collectionPath).length;
  let best: { path: string; params: string[] } | undefined;
  for (const [p, item] of Object.entries(paths)) {
    if (!p.startsWith(`${prefix}/`)) continue;
    const segments = split(p);
    const rest = segments.slice(base);
    if (rest.length < 2 || !rest.every(isParam)) continue;
    if (!isObject(item['delete'])) continue;
    // The shallowest wins (`/{a}/{b}` before `/{a}/{b}/{c}`), then the document's order.
    if (best === undefined || rest.length < best.params.length) {
      best = { path: p, params: rest.map((s) => s.slice(1, -1)) };
    }
  }
  if (best === undefined) return undefined;
  // A shallower item path with a DELETE is the objects' own address.
  const shallower = Object.keys(paths).some((p) => {
    const rest = split(p).slice(base);
    return (
      p.startsWith(`${prefix}/`) &&
      rest.length >= 1 &&
      rest.length < best.params.length &&
      rest.every(isParam) &&
      isObject(paths[p]!['delete'])
    );
  });
  return shallower ? undefined : best;
}

/**
 * The field holding each parameter of a composite item key, or the reason one cannot be found. Per
 * parameter, the first that holds:
 * 1. `x-tend-key-fields: {param: field}` on the item path (an overlay);
 * 2. a field named like the parameter (`{ip}`: `ip`; `{type}`: `type`);
 * 3. a field named like the parameter without its id suffix (`{clusterId}`: `cluster`);
 * 4. for a parameter named after the collection's objects (`{bucket}` in `/buckets`, `{volume}` in
 *    `/volumes`): the object's name-like field (`name`, `label`, …, in that order).
 * The field must be one the objects are read with (`readFields`) and one the create sends
 * (`createFields`): a listed object must carry its address, and a create must choose it.
 */
export function itemKeyParts(input: {
  readonly typeName: string;
  readonly collectionPath: string;
  readonly itemPath: string;
  readonly params: readonly string[];
  readonly declared: unknown;
  readonly readFields: readonly string[];
  readonly createFields: readonly string[];
  /**
   * Whether the read object and the create body have a field at a key path below the top level
   * (`meta.label`, core/key-path.ts): a declared key field may be one. Absent: top-level only.
   */
  readonly hasNested?: (path: string) => boolean;
}): { readonly parts: readonly ItemKeyPart[] } | { readonly reason: string } {
  const { params, readFields, createFields } = input;
  const usable = (f: string) =>
    (readFields.includes(f) && createFields.includes(f)) ||
    (isNestedKeyPath(f) && input.hasNested?.(f) === true);
  const declared = isObject(input.declared) ? input.declared : {};
  const hint = (param: string, field = '<field>') =>
    `name it with x-tend-key-fields: {${param}: ${field}} on ${input.itemPath}`;
  if (input.declared !== undefined && !isObject(input.declared)) {
    return {
      reason: `x-tend-key-fields on ${input.itemPath} must map each path parameter to a field ({${params[0]}: <field>, …})`,
    };
  }
  for (const k of Object.keys(declared)) {
    if (!params.includes(k)) {
      return {
        reason: `x-tend-key-fields on ${input.itemPath} names {${k}}, which is not one of its own parameters (${params.map((p) => `{${p}}`).join(', ')})`,
      };
    }
  }
  const singular = singularOf(split(input.collectionPath).at(-1) ?? '');
  const parts: ItemKeyPart[] = [];
  for (const param of params) {
    const stated = declared[param];
    if (stated !== undefined) {
      if (typeof stated !== 'string' || !usable(stated)) {
        return {
          reason: `x-tend-key-fields on ${input.itemPath} names ${JSON.stringify(stated)} for {${param}}, which is not a field (or a dotted path to one) both the create body and the read object have`,
        };
      }
      parts.push({ param, field: stated, why: 'declared with x-tend-key-fields' });
      continue;
    }
    const plain = param.toLowerCase().replace(/[^a-z0-9]/g, '');
    const same = readFields.find((f) => f.toLowerCase().replace(/[^a-z0-9]/g, '') === plain);
    if (same !== undefined && usable(same)) {
      parts.push({ param, field: same, why: `the field named like {${param}}` });
      continue;
    }
    const stem = isIdLike(param) ? param.replace(/[_\-.]?(id|uuid|guid)$/i, '') : undefined;
    const stemField =
      stem === undefined || stem === ''
        ? undefined
        : readFields.find((f) => f.toLowerCase() === stem.toLowerCase() && usable(f));
    if (stemField !== undefined) {
      parts.push({ param, field: stemField, why: `{${param}} without its id suffix` });
      continue;
    }
    if (singular !== undefined && plain === singular.toLowerCase()) {
      const named = NAME_LIKE.map((n) => readFields.find((f) => f.toLowerCase() === n)).find(
        (f): f is string => f !== undefined && usable(f),
      );
      if (named !== undefined) {
        parts.push({
          param,
          field: named,
          why: `{${param}} names one of the ${input.typeName} objects, by its ${named}`,
        });
        continue;
      }
    }
    return {
      reason: `no field of the objects holds {${param}} (none is named like it, and it is not a name-like field both the create body and the read object have); ${hint(param)}`,
    };
  }
  const fields = parts.map((p) => p.field);
  const twice = fields.find((f, i) => fields.indexOf(f) !== i);
  if (twice !== undefined) {
    return {
      reason: `two parameters of ${input.itemPath} would be held by the same field ${twice}; name each with x-tend-key-fields`,
    };
  }
  return { parts };
}

/** The singular of a collection segment (`buckets` → `bucket`, `policies` → `policy`). */
function singularOf(segment: string): string | undefined {
  if (/ies$/i.test(segment)) return segment.slice(0, -3) + 'y';
  if (/(s|x|z|ch|sh)es$/i.test(segment)) return segment.slice(0, -2);
  if (/s$/i.test(segment) && !/ss$/i.test(segment)) return segment.slice(0, -1);
  return undefined;
}

function split(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

function isParam(segment: string): boolean {
  return segment.startsWith('{') && segment.endsWith('}');
}
