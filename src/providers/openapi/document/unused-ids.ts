/**
 * Keys whose values are data (an example, a default, an enumeration), never schemas: a `$ref` or an
 * `$id` written under them is text, not a reference or a schema identifier.
 */
const DATA_KEYS: ReadonlySet<string> = new Set(['example', 'examples', 'default', 'const', 'enum']);

/** A URI scheme (`https:`, `urn:`), which makes a reference absolute. */
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * Removes, in place, the `$id` of every schema below the document's root that nothing needs, before
 * the document is dereferenced (docs/decisions/0035-ref-parser.md). In OpenAPI 3.1 a schema's `$id`
 * changes the base its `$ref`s resolve from: an `$id` copied from a JSON Schema file
 * (`https://example.com/pet.json`) would send the internal `$ref`s below it to that URL, which
 * Tend never reads. An `$id` stays when a `$ref` that is not a pointer into the document
 * (`#/…`) contains it, or when what is below it depends on it: a relative `$ref`, a pointer that
 * exists inside the schema itself, or a nested relative `$id`. Under the data keys
 * (`example`, `examples`, `default`, `const`, `enum`) nothing is read or changed. Schemas are
 * decided innermost first, so a nested `$id` removed no longer keeps its parent's.
 *
 * This is what `@readme/openapi-parser` 9 did before dereferencing (Tend's loader used it until
 * decision 0035), written again: the loader's output is unchanged. Shared objects (YAML aliases) are
 * visited once; nothing here recurses, so a cycle is harmless.
 */
export function dropUnusedIds(root: Record<string, unknown>): void {
  const refs = collectRefs(root);
  // Pointers into the document are never a schema's identifier; every other $ref may name one.
  const named = [...refs].filter((ref) => !isDocumentPointer(ref));
  const referenced = (id: string): boolean => named.some((ref) => ref.includes(id));
  // Depth first, each object decided after everything below it (post-order).
  const seen = new Set<object>([root]);
  const stack: { node: object; children: boolean }[] = [{ node: root, children: false }];
  while (stack.length > 0) {
    const top = stack.pop()!;
    const { node } = top;
    if (!top.children) {
      stack.push({ node, children: true });
      for (const child of schemaChildren(node)) {
        if (seen.has(child)) continue;
        seen.add(child);
        stack.push({ node: child, children: false });
      }
      continue;
    }
    if (node === root || Array.isArray(node)) continue;
    const id = (node as Record<string, unknown>)['$id'];
    if (typeof id !== 'string' || referenced(id) || dependsOnId(node)) continue;
    delete (node as Record<string, unknown>)['$id'];
  }
}

/** The objects and arrays directly below a value that may hold schemas (not under a data key). */
function schemaChildren(node: object): object[] {
  const out: object[] = [];
  if (Array.isArray(node)) {
    for (const item of node as unknown[]) {
      if (item !== null && typeof item === 'object') out.push(item);
    }
    return out;
  }
  for (const [key, value] of Object.entries(node)) {
    if (DATA_KEYS.has(key) || value === null || typeof value !== 'object') continue;
    out.push(value as object);
  }
  return out;
}

/** Every string `$ref` of the document, outside the data keys. */
function collectRefs(root: object): Set<string> {
  const refs = new Set<string>();
  const seen = new Set<object>([root]);
  const stack: object[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (!Array.isArray(node)) {
      const ref = (node as Record<string, unknown>)['$ref'];
      if (typeof ref === 'string') refs.add(ref);
    }
    for (const child of schemaChildren(node)) {
      if (seen.has(child)) continue;
      seen.add(child);
      stack.push(child);
    }
  }
  return refs;
}

/**
 * Whether what is below a schema relies on its `$id`: a relative `$ref` (resolved against the
 * `$id`), a pointer (`#/…`) that exists inside the schema itself, or a nested schema with a relative
 * `$id` (a nested `$id` ends the search below it).
 */
function dependsOnId(scope: object): boolean {
  const seen = new Set<object>([scope]);
  const stack: object[] = [scope];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (!Array.isArray(node)) {
      const record = node as Record<string, unknown>;
      const id = record['$id'];
      if (node !== scope && typeof id === 'string') {
        if (isRelative(id)) return true;
        continue;
      }
      const ref = record['$ref'];
      if (typeof ref === 'string') {
        if (isRelative(ref)) return true;
        if (isDocumentPointer(ref) && pointerExists(scope, ref)) return true;
      }
    }
    for (const child of schemaChildren(node)) {
      if (seen.has(child)) continue;
      seen.add(child);
      stack.push(child);
    }
  }
  return false;
}

function isRelative(ref: string): boolean {
  return !ref.startsWith('#') && !SCHEME.test(ref);
}

/** `#` or `#/…`, after percent-decoding. */
function isDocumentPointer(ref: string): boolean {
  const decoded = percentDecoded(ref);
  return decoded === '#' || decoded.startsWith('#/');
}

/** Whether a pointer (`#/a/b`) leads somewhere from `root`; `#` and `#/` always do. */
function pointerExists(root: object, ref: string): boolean {
  const pointer = percentDecoded(ref);
  if (pointer === '#' || pointer === '#/') return true;
  let current: unknown = root;
  for (const raw of pointer.slice(2).split('/')) {
    const token = percentDecoded(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, token)) {
      return false;
    }
    current = (current as Record<string, unknown>)[token];
  }
  return true;
}

/** A percent-decoded string, or the string as it is when it is not validly encoded. */
function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
