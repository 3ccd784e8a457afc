import type { InspectReport, InspectedType } from './inspect.js';

/**
 * An OpenAPI Overlay 1.0 stub for a document, with the decisions inference left open: per type,
 * actions on its operations whose `update` is empty (`{}`: the stub changes nothing as it is) and the
 * `x-tend-*` annotations to consider written as comments inside it, each with what inference found
 * and why. It loads as a valid overlay; a person uncomments what is true of the platform (and removes
 * that action's `{}`). Provider parameters go in the Provider document, not the overlay: they are
 * listed as comments at the top. Paths not managed are listed at the end with the reason.
 */
export function overlaySkeleton(report: InspectReport): string {
  const out: string[] = [];
  const title = report.title ?? report.spec;
  out.push(
    `# Overlay stub for ${oneLine(title)}, written by \`tend providers inspect --overlay-skeleton\`.`,
    '# Every action below changes nothing yet (`update: {}`); the commented lines in it are the',
    '# decisions inference left open. Uncomment what is true of the platform, delete the `{}` line of',
    '# that action, and run `tend providers inspect <spec> --overlay <this file>` again. Targets address',
    '# the document as written. The vocabulary: docs/onboard-rest-api.md.',
  );
  const parameters = [...new Set(report.types.flatMap((t) => t.parameters))];
  if (parameters.length > 0) {
    out.push(
      '#',
      '# Path parameters no managed type gives a value for. Either give them a value per provider, in',
      '# the Provider document (not here):',
      `#   parameters: { ${parameters.map((p) => `${p}: <value>`).join(', ')} }`,
      '# or, when the value is the same for every installation of the platform, here on the root:',
      `#   x-tend-parent-values: { ${parameters.map((p) => `${p}: <value>`).join(', ')} }`,
    );
  }
  out.push(
    'overlay: 1.0.0',
    'info:',
    `  title: ${quote(`Tend overlay for ${title}`)}`,
    '  version: 0.1.0',
  );
  out.push('actions:');
  out.push(
    '  - target: $',
    '    description: TODO document-wide decisions (delete this action if there are none)',
    '    update:',
    "      # x-tend-lifecycle: { path: /lifecycle }  # the platform's lifecycle endpoint, if it has one",
    "      # x-tend-audit: { path: /audit }  # the platform's attributed audit feed, if it has one",
    ...(parameters.length > 0
      ? [`      # x-tend-parent-values: { ${parameters.map((p) => `${p}: <value>`).join(', ')} }`]
      : []),
    '      {}',
  );
  for (const t of report.types) for (const line of typeActions(t)) out.push(line);
  if (report.unmapped.length > 0) {
    out.push(
      '',
      '# Paths not managed, and why. A resource type off the plain /x and /x/{id} paths can be',
      '# assembled with `x-tend-type: <name>` and `x-tend-op: list|create|read|update|delete` on its',
      '# operations; a collection to leave alone can say so with `x-tend-ignore: <reason>`.',
    );
    for (const u of report.unmapped) out.push(`#   ${oneLine(u.path)}: ${oneLine(u.reason)}`);
  }
  return `${out.join('\n')}\n`;
}

const NAME_LIKE = ['name', 'slug', 'key', 'username', 'login', 'handle', 'code', 'identifier'];

function typeActions(t: InspectedType): string[] {
  if (t.embeddedIn !== undefined) return []; // declared by an overlay already
  const where = oneLine(t.collectionPath);
  const out: string[] = [
    '',
    `  # --- ${t.name}: ${where} ${'-'.repeat(Math.max(3, 60 - t.name.length - where.length))}`,
  ];
  for (const line of wrap(`identity: ${t.identityWhy}`)) out.push(`  # ${line}`);
  const key = t.naturalKey?.at(-1) ?? NAME_LIKE.find((f) => t.fields.includes(f)) ?? '<field>';
  const identityLines =
    t.identity === null
      ? [
          `# x-tend-identity: natural-key  # when the platform refuses a second object with the same ${key}`,
          `# x-tend-natural-key: ${key}`,
          '# x-tend-identity: marker  # else: Tend writes its marker into a field objects keep',
          '# x-tend-marker: { field: <tags|labels|description>, kind: <map|list|text> }',
          '# x-tend-identity: server-id  # else: only when POST honours an Idempotency-Key',
        ]
      : [
          `# x-tend-identity: ${t.identity}  # inferred; declare to keep it whatever the document says`,
        ];
  // A create body wrapping the fields in one property (request-envelope.ts).
  const wrapLines =
    t.requestEnvelope?.create !== undefined
      ? [`# x-tend-request-envelope: ${t.requestEnvelope.create}  # inferred (false: not wrapped)`]
      : t.requestEnvelopeNote !== undefined
        ? [
            `# ${oneLine(t.requestEnvelopeNote)}`,
            `# x-tend-request-envelope: <property>  # if the fields are sent wrapped`,
          ]
        : [];
  // Fields sent in the create's query string, and an array body as one field (create-query.ts).
  const query = t.createQuery;
  const queryLines =
    query === undefined
      ? []
      : [
          ...(query.query.length > 0
            ? [
                `# x-tend-query-fields: ${flow(Object.fromEntries(query.query.map((q) => [q.param, q.field])))}  # as found: sent in the query (parameter: field)`,
              ]
            : []),
          ...(query.bodyField !== undefined
            ? [
                `# x-tend-body-field: ${query.bodyField}  # as found: the field holding the array body`,
              ]
            : []),
        ];
  push(
    out,
    action(t.operations.create, `TODO ${t.name}: how objects are told apart after a crash`, [
      ...identityLines,
      ...wrapLines,
      ...queryLines,
    ]),
  );

  const listLines: string[] = [];
  if (t.pagination === null) {
    if (t.paginationNote !== undefined) listLines.push(`# ${oneLine(t.paginationNote)}`);
    listLines.push(
      '# x-tend-pagination: { style: page, param: page, sizeParam: per_page, size: 100 }',
      '# x-tend-pagination: { style: offset, param: offset, sizeParam: limit, size: 100 }',
      '# x-tend-pagination: { style: cursor, param: cursor, next: next_cursor }',
      '# x-tend-pagination: { style: link }  # an RFC 8288 Link: <…>; rel="next" header',
      '# x-tend-pagination: { style: next, next: next }  # a next-page URL in the body',
    );
  } else {
    listLines.push(
      `# x-tend-pagination: ${flow(t.pagination as unknown as Record<string, unknown>)}  # inferred`,
    );
  }
  listLines.push(
    t.envelope.list !== undefined
      ? `# x-tend-envelope: ${t.envelope.list}  # inferred: the property holding the array`
      : '# x-tend-envelope: <property>  # if the array comes wrapped ({"data": […]})',
  );
  push(
    out,
    action(t.operations.list, `TODO ${t.name}: how the list is paged and wrapped`, listLines),
  );

  push(
    out,
    action(t.operations.read, `TODO ${t.name}: is one object's answer wrapped?`, [
      t.envelope.read !== undefined
        ? `# x-tend-envelope: ${t.envelope.read}  # inferred (false: not wrapped)`
        : '# x-tend-envelope: <property>  # if the object comes wrapped ({"server": {…}})',
    ]),
  );
  const fields = t.fields.filter((f) => !t.createOnly.includes(f) && !(t.parent?.field === f));
  if (fields.length > 0) {
    out.push(
      `  # fields that may change in place (${t.updateMode === 'none' ? 'none can: no PUT or PATCH' : `update: ${t.updateMode}`}): ${oneLine(fields.join(', '))}.`,
      '  # A field the platform cannot change without a new object takes x-tend-immutable: true on its',
      '  # property in the create schema; one it sets itself, readOnly: true.',
    );
  }
  return out;
}

function action(
  op: { method: string; path: string },
  description: string,
  lines: string[],
): string[] {
  return [
    `  - target: ${quote(`$.paths[${jsonPathString(op.path)}].${op.method.toLowerCase()}`)}`,
    `    description: ${quote(description)}`,
    '    update:',
    // Names and reasons come from the document: one line each, so that none can end a comment.
    ...lines.map((l) => `      ${oneLine(l)}`),
    '      {}',
  ];
}

/** A JSONPath string literal (single-quoted, as JSONPath writes member names). */
export function jsonPathString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** A YAML double-quoted scalar. */
function quote(s: string): string {
  return JSON.stringify(s);
}

function flow(o: Record<string, unknown>): string {
  return `{ ${Object.entries(o)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ')} }`;
}

function oneLine(s: string): string {
  return s.replace(/[\s\u0085]+/g, ' ').trim();
}

function wrap(text: string, width = 96): string[] {
  const words = oneLine(text).split(' ');
  const lines: string[] = [];
  let cur = '';
  for (const w of words) {
    if (cur.length > 0 && cur.length + 1 + w.length > width) {
      lines.push(cur);
      cur = w;
    } else cur = cur.length > 0 ? `${cur} ${w}` : w;
  }
  if (cur.length > 0) lines.push(cur);
  return lines;
}

function push(out: string[], lines: readonly string[]): void {
  for (const l of lines) out.push(l);
}
