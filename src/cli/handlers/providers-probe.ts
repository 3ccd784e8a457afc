import type { ProbeOptions } from '../commands/providers.js';
import type { ProbeReport } from '../../app/index.js';
import { PROBE_USAGE_ERRORS, probeProvider, processUserAgent } from '../../app/index.js';
import { setKey, TendError, toTendError } from '../../core/index.js';
import type { Output } from '../common.js';
import { cliContext, fail, output } from '../common.js';
import { EXIT } from '../exit-codes.js';

/** The flags as the probe takes them; a malformed one is a usage error naming it. */
function requestFlags(o: ProbeOptions): {
  scope: Record<string, string>;
  budget?: number;
  auth?: { header: string; value: string };
} {
  const scope: Record<string, string> = {};
  for (const s of o.scope) {
    const eq = s.indexOf('=');
    if (eq <= 0) {
      throw new TendError('probe.bad_scope', `--scope ${s}: expected <param>=<value>`, {
        hint: 'e.g. --scope zone_id=scratch.example.org.',
      });
    }
    setKey(scope, s.slice(0, eq), s.slice(eq + 1), '--scope');
  }
  let budget: number | undefined;
  if (o.budget !== undefined) {
    budget = Number(o.budget);
    if (!Number.isInteger(budget) || budget < 1) {
      throw new TendError(
        'probe.budget_too_small',
        `--budget ${o.budget}: expected a whole number of requests, at least 1`,
      );
    }
  }
  if ((o.authHeader === undefined) !== (o.authEnv === undefined)) {
    throw new TendError('probe.bad_scope', '--auth-header and --auth-env go together', {
      hint: 'e.g. --auth-header X-API-Key --auth-env PDNS_API_KEY (the secret stays in the environment)',
    });
  }
  let auth: { header: string; value: string } | undefined;
  if (o.authHeader !== undefined && o.authEnv !== undefined) {
    const value = cliContext().env[o.authEnv];
    if (value === undefined || value === '') {
      throw new TendError('probe.bad_scope', `--auth-env ${o.authEnv}: the variable is not set`, {
        hint: `export ${o.authEnv}=<the credential> first`,
      });
    }
    cliContext().redactor.add(value);
    auth = { header: o.authHeader, value: (o.authPrefix ?? '') + value };
  }
  return { scope, ...(budget !== undefined ? { budget } : {}), ...(auth ? { auth } : {}) };
}

/** `tend providers probe <document>`, run: exit 0 when it ran, 1 when it failed or left objects, 2 for usage. */
export async function probeHandler(document: string, o: ProbeOptions): Promise<void> {
  const out = output(o.json);
  for (const url of [document, o.overlay, o.endpoint])
    if (url) cliContext().redactor.addUrlCredentials(url);
  try {
    const ctx = cliContext();
    const flags = requestFlags(o);
    const report = await probeProvider({
      spec: document,
      ...(o.overlay !== undefined ? { overlay: o.overlay } : {}),
      endpoint: o.endpoint,
      ...flags,
      types: o.type,
      out: o.out,
      ...(o.journal !== undefined ? { journal: o.journal } : {}),
      yes: o.yes === true,
      userAgent: processUserAgent(ctx.env, ctx.process.pid),
      redactor: ctx.redactor,
      progress: (line) =>
        out.json ? out.recordErr({ progress: line }) : out.err(out.style.dim(line)),
    });
    const failed = report.leftovers.length > 0 || report.types.some((t) => t.status === 'failed');
    if (out.json) out.data({ ok: !failed, ...report });
    else renderProbe(out, report);
    process.exitCode = failed ? EXIT.error : EXIT.ok;
  } catch (e) {
    fail(out, e);
    if (PROBE_USAGE_ERRORS.has(toTendError(e).code)) process.exitCode = EXIT.usage;
  }
}

/** The human form: per type what was learned, then what was left, then where the overlay went. */
function renderProbe(out: Output, r: ProbeReport): void {
  const s = out.style;
  out.line(
    s.bold(`Probed ${r.endpoint} (run ${r.run}, ${r.budget.used} of ${r.budget.limit} requests)`),
  );
  for (const o of r.removedBefore)
    out.line(
      s.dim(
        `  removed first: ${o.type} ${o.name}${o.id ? ` (${o.id})` : ''}, left by an earlier run`,
      ),
    );
  for (const t of r.types) {
    out.line('');
    const status =
      t.status === 'probed'
        ? s.green(t.status)
        : t.status === 'failed'
          ? s.red(t.status)
          : s.yellow(t.status);
    out.line(`${s.bold(s.cyan(t.type))}  ${status}${t.reason ? `: ${t.reason}` : ''}`);
    for (const f of r.facts.filter((x) => x.type === t.type)) out.line(`  ${factLine(f)}`);
  }
  if (r.stopped) out.line(s.yellow(`\n${r.stopped}`));
  if (r.leftovers.length > 0) {
    out.line('');
    out.line(s.red('Left on the platform (remove them by hand, or run the probe again):'));
    for (const o of r.leftovers)
      out.line(s.red(`  ${o.type} ${o.name}${o.id ? ` (${o.id})` : ' (id unknown)'}`));
  }
  out.line('');
  out.line(`Overlay written to ${r.out}`);
}

function factLine(f: ProbeReport['facts'][number]): string {
  switch (f.kind) {
    case 'identity':
      return `${'identity'.padEnd(12)} ${f.field} ${f.unique ? 'is a natural key' : 'is not unique'} — ${f.evidence}`;
    case 'marker':
      return `${'marker'.padEnd(12)} ${f.field} (${f.markerKind}) ${f.kept ? 'keeps a marker' : 'drops it'} — ${f.evidence}`;
    case 'field':
      return `${'change'.padEnd(12)} ${f.field}: ${f.outcome} — ${f.evidence}`;
    case 'normalize':
      return `${'normalize'.padEnd(12)} ${f.path}: ${f.ops.join(', ')} — ${f.evidence}`;
    case 'default':
      return `${'default'.padEnd(12)} ${f.path} = ${JSON.stringify(f.value)} — ${f.evidence}`;
    case 'write-only':
      return `${'write-only'.padEnd(12)} ${f.field} — ${f.evidence}`;
    case 'consistent-reads':
      return `${'reads'.padEnd(12)} ${f.listedAtOnce ? 'listed at once' : 'not listed at once'} — ${f.evidence}`;
  }
}
