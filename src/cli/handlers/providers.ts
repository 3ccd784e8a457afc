import type { InspectOptions } from '../commands/providers.js';
import type { InspectReport, InspectedType } from '../../app/index.js';
import {
  inspectProvider,
  inspectSkeleton,
  processUserAgent,
  writeOverlaySkeleton,
} from '../../app/index.js';
import type { Output } from '../common.js';
import { cliContext, fail, output } from '../common.js';

/** How the identity row names where the marker goes, per marker kind. */
const MARKER_FORMS = {
  map: 'tags in',
  list: 'entries in',
  text: 'a token at the end of',
} as const;

/** The human form of an inspect report. */
export function renderInspect(out: Output, r: InspectReport): void {
  const s = out.style;
  const source = r.convertedFrom
    ? `${r.convertedFrom}, read as openapi ${r.version}`
    : `openapi ${r.version}`;
  out.line(s.bold(r.title ?? r.spec));
  out.line(`  ${r.spec} (${source})`);
  if (r.overlay) out.line(`  overlay ${r.overlay}`);
  if (r.lifecycleEndpoint) out.line(`  lifecycle endpoint POST ${r.lifecycleEndpoint}`);
  if (r.auditFeed) out.line(`  audit feed GET ${r.auditFeed}`);
  out.line(
    r.consistentReads
      ? '  reads see writes at once (x-tend-consistent-reads): an object missing from a list is gone'
      : `  reads may lag writes: an object created moments ago is waited for ${s.dim('(x-tend-consistent-reads says otherwise)')}`,
  );
  out.line(
    `  ${count(r.types.length, 'resource type')}, ${count(r.unmapped.length, 'path')} not managed, ${count(r.warnings.length, 'warning')}`,
  );
  const idFieldOf = (type: string): string => r.types.find((x) => x.name === type)?.idField ?? 'id';
  for (const t of r.types) renderType(out, t, idFieldOf);
  if (r.unmapped.length > 0) {
    out.line('');
    out.line(s.bold('Not managed'));
    const width = Math.min(
      48,
      r.unmapped.reduce((max, u) => Math.max(max, u.path.length), 0),
    );
    for (const u of r.unmapped) out.line(`  ${u.path.padEnd(width)}  ${s.dim(u.reason)}`);
  }
  if (r.warnings.length > 0) {
    out.line('');
    out.line(s.bold('Warnings'));
    for (const w of r.warnings) out.line(s.yellow(`  ${w}`));
  }
}

function renderType(out: Output, t: InspectedType, idFieldOf: (type: string) => string): void {
  const s = out.style;
  out.line('');
  const fixed = Object.entries(t.fixed).map(([k, v]) => `${k} = ${v}`);
  const where = t.embeddedIn
    ? `items of ${t.parent?.type ?? '?'}.${t.embeddedIn.field} (GET ${t.itemPath})`
    : t.collectionPath;
  out.line(
    `${s.bold(s.cyan(t.name))}  ${where}${fixed.length > 0 ? s.dim(`  (${fixed.join(', ')})`) : ''}`,
  );
  const row = (label: string, value: string) => out.line(`  ${label.padEnd(13)}${value}`);
  const list = (xs: readonly string[]) => (xs.length > 0 ? xs.join(', ') : s.dim('none'));
  if (t.parent)
    row(
      'parent',
      `${t.parent.type} (declare ${t.parent.field}: \${<provider>.${t.parent.type}/<name>.${idFieldOf(t.parent.type)}})`,
    );
  for (const note of t.parentNotes ?? []) row('parent field', note);
  if (t.identity === null) {
    row('identity', s.red(`none: ${t.identityReason ?? 'unknown'}; Tend will not create these`));
    if (t.needs !== undefined) row('needs', s.yellow(t.needs.line));
  } else {
    const detail =
      t.identity === 'natural-key'
        ? `: ${list(t.naturalKey ?? [])}`
        : t.identity === 'marker'
          ? ` (${MARKER_FORMS[t.markerKind ?? 'map']} ${t.markerField ?? '?'})`
          : '';
    const key = t.idempotencyKey ? ', Idempotency-Key' : '';
    row('identity', `${t.identity}${detail}${key}`);
  }
  if (t.identity !== null) row('why', t.identityWhy);
  row(
    'id',
    t.itemKey !== undefined
      ? `${t.itemKey.map((k) => `${k.field} ({${k.param}})`).join(' / ')}, each URI-encoded, joined by /`
      : t.idField,
  );
  if (t.parameters.length > 0) {
    row(
      'parameters',
      s.yellow(
        `${t.parameters.map((p) => `{${p}}`).join(', ')} from the Provider document: parameters: {${t.parameters.map((p) => `${p}: <value>`).join(', ')}}`,
      ),
    );
  }
  if (t.markerField !== undefined) {
    row('marker', `${t.markerField}${t.markerKind !== undefined ? ` (${t.markerKind})` : ''}`);
  }
  if (t.embeddedIn) {
    const op = t.embeddedIn.op
      ? ` with ${t.embeddedIn.op.field} ${t.embeddedIn.op.replace} / ${t.embeddedIn.op.delete}`
      : '';
    row('changed by', `${t.embeddedIn.method} ${t.itemPath}, field ${t.embeddedIn.field}${op}`);
  } else {
    const opText = (o: {
      method: string;
      path: string;
      assigned?: string;
      addressedBy?: Readonly<Record<string, string>>;
    }) => {
      const by = Object.entries(o.addressedBy ?? {}).map(([p, f]) => `{${p}} from ${f}`);
      const notes = [...(o.assigned !== undefined ? [o.assigned] : []), ...by];
      return `${o.method} ${o.path}${notes.length > 0 ? s.dim(` (${notes.join('; ')})`) : ''}`;
    };
    row('list', opText(t.operations.list));
    row('read', opText(t.operations.read));
    row('create', opText(t.operations.create));
    row(
      'update',
      t.operations.update
        ? `${opText(t.operations.update)}, ${UPDATE_MODES[t.updateMode]}`
        : s.yellow('none: every change is a replace'),
    );
    if (t.updateWhy !== undefined) row('', s.dim(t.updateWhy));
    row(
      'delete',
      t.operations.delete
        ? opText(t.operations.delete)
        : s.yellow(
            `none: ${t.noDelete ?? 'the API offers no DELETE'}; a resource removed from the intent is never deleted (its plan step is blocked)`,
          ),
    );
    const env = (['list', 'read', 'create'] as const)
      .filter((k) => t.envelope[k] !== undefined)
      .map((k) => `${k} in ${t.envelope[k]!}`);
    row('envelope', env.length > 0 ? env.join(', ') : s.dim('none'));
    if (t.requestEnvelope !== undefined) {
      const sent = (['create', 'update'] as const)
        .filter((k) => t.requestEnvelope![k] !== undefined)
        .map((k) => `${k} body in ${t.requestEnvelope![k]!}`);
      row('sends', sent.join(', '));
    } else if (t.requestEnvelopeNote !== undefined) {
      row('sends', s.yellow(t.requestEnvelopeNote));
    }
    const inPath = t.createQuery?.pathFields ?? [];
    if (inPath.length > 0) {
      row('create path', list(inPath.map((f) => `{${f.param}} from the field ${f.field}`)));
    }
    const query = t.createQuery?.query ?? [];
    if (query.length > 0) {
      row(
        'create query',
        list(query.map((q) => (q.param === q.field ? q.param : `${q.param} (field ${q.field})`))),
      );
    }
    for (const q of t.sensitiveInQuery ?? []) {
      row(
        'URL secret',
        s.yellow(
          `${q.field} is sent as the create's query parameter ${q.param}: the URL carries the secret, and the platform's access logs and proxies may keep it (Tend never prints or stores it); prefer a short-lived secret, and rotate it if those logs are shared`,
        ),
      );
    }
    row(
      'pagination',
      t.pagination !== null
        ? describePagination(t.pagination)
        : t.paginationNote !== undefined
          ? s.yellow(`not followed: ${t.paginationNote}`)
          : s.dim('none (one answer)'),
    );
  }
  row(
    'lifecycle',
    t.lifecycle === 'platform'
      ? 'platform lifecycle endpoint'
      : 'field annotations, else update in place',
  );
  row('fields', list(t.fields.map((f) => (t.required.includes(f) ? `${f}*` : f))));
  row('create-only', list(t.createOnly));
  row('output-only', list(t.outputOnly));
  if (t.serverOwned.length > 0) row('server-owned', list(t.serverOwned));
  if (t.writeOnly.length > 0) row('write-only', list(t.writeOnly));
  if (t.sensitive.length > 0) row('sensitive', list(t.sensitive));
  const norm = Object.entries(t.normalize).map(([f, ops]) => `${f} (${ops.join(', ')})`);
  if (norm.length > 0) row('normalize', norm.join('; '));
  for (const r of t.absentWhen ?? []) {
    row(
      'absent when',
      `${r.field} ${r.in.length === 1 ? '=' : 'in'} ${r.in.map(String).join(', ')}`,
    );
  }
  if (t.createIdField !== undefined)
    row('create id', `${t.createIdField} in the answer to the POST`);
  for (const r of t.importExclude) {
    const what = `${r.field} ${r.values.length === 1 ? '=' : 'in'} ${r.values.map(String).join(', ')}`;
    row('not imported', r.reason !== undefined ? `${what}: ${r.reason}` : what);
  }
}

const UPDATE_MODES: Record<InspectedType['updateMode'], string> = {
  merge: 'merge (changed fields only)',
  replace: 'replace (the whole object)',
  partial: 'changed fields only (x-tend-partial-update)',
  'through-parent': 'through the parent',
  none: 'none',
};

function describePagination(p: NonNullable<InspectedType['pagination']>): string {
  const bound = `at most ${p.maxPages} pages / ${p.maxItems} objects`;
  switch (p.style) {
    case 'page':
      return `page: ${p.param} from ${p.start}${p.sizeParam !== undefined ? `, ${p.sizeParam}${p.size !== undefined ? `=${p.size}` : ''}` : ''}; ${bound}`;
    case 'offset':
      return `offset: ${p.param}${p.sizeParam !== undefined ? `, ${p.sizeParam}${p.size !== undefined ? `=${p.size}` : ''}` : ''}; ${bound}`;
    case 'cursor':
      return `cursor: ${p.param} from the answer's ${p.next}; ${bound}`;
    case 'link':
      return `Link header rel="next"; ${bound}`;
    case 'next':
      return `next URL in the answer's ${p.next}; ${bound}`;
  }
}

function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

/** `tend providers inspect <spec>`, run: the report, or the overlay stub. */
export async function inspectHandler(spec: string, o: InspectOptions): Promise<void> {
  const out = output(o.json);
  // Credentials in a document URL are secrets: never printed, even in a fetch error.
  for (const url of [spec, o.overlay]) if (url) cliContext().redactor.addUrlCredentials(url);
  try {
    const ctx = cliContext();
    const report = await inspectProvider({
      spec,
      ...(o.overlay ? { overlay: o.overlay } : {}),
      userAgent: processUserAgent(ctx.env, ctx.process.pid),
    });
    const skeleton = o.overlaySkeleton;
    if (skeleton === true || skeleton === '-') {
      // The stub alone on stdout, so that it can be redirected into a file as it is.
      out.line(inspectSkeleton(report).replace(/\n$/, ''));
      return;
    }
    if (skeleton !== undefined) writeOverlaySkeleton(report, skeleton);
    if (out.json) {
      out.data({
        ok: true,
        ...report,
        ...(skeleton !== undefined ? { overlaySkeleton: skeleton } : {}),
      });
    } else {
      renderInspect(out, report);
      if (skeleton !== undefined) {
        out.line('');
        out.line(
          `Overlay stub written to ${skeleton}: uncomment the decisions in it, then inspect again with --overlay ${skeleton}`,
        );
      }
    }
  } catch (e) {
    fail(out, e);
  }
}
