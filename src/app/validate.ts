import { resolve } from 'node:path';
import type { Address, Diagnostic } from '../core/index.js';
import { sortDiagnostics } from '../core/index.js';
import { closeProviders } from '../engine/index.js';
import type { AppContext } from './context.js';
import type { WorkspaceNameSource } from './workspace.js';
import { chooseWorkspaceName, loadIntentWithProviders } from './workspace.js';

/** What `validate` is asked. */
export interface ValidateRequest {
  readonly dir: string;
  readonly workspace?: string;
}

/** Every diagnostic, and what the intent declares when it is valid. */
export interface ValidateReport {
  readonly ok: boolean;
  readonly diagnostics: readonly Diagnostic[];
  readonly workspace?: { readonly name: string; readonly source: WorkspaceNameSource };
  readonly providers: readonly string[];
  readonly resources: readonly { address: Address; dependsOn: readonly Address[] }[];
}

/**
 * Checks an intent directory completely: syntax, kinds, types, schemas, references, secrets. Reads
 * the providers' documents; sends nothing that manages anything, opens no store.
 */
export async function validate(ctx: AppContext, request: ValidateRequest): Promise<ValidateReport> {
  const dir = resolve(request.dir);
  const hint = chooseWorkspaceName({
    flag: request.workspace,
    env: ctx.env['TEND_WORKSPACE'],
    dir,
  });
  const loaded = await loadIntentWithProviders(ctx, dir, hint.name);
  const { intent, providers } = loaded;
  // What a provider found wrong in its platform's description (a bad overlay annotation, a
  // document it read leniently) is shown here too, at the Provider document, not only by inspect.
  const warnings: Diagnostic[] = [];
  for (const decl of intent?.providers ?? []) {
    for (const w of providers.get(decl.name)?.describe().warnings ?? []) {
      warnings.push({
        code: 'provider.warning',
        severity: 'warning',
        message: `provider ${decl.name}: ${w}`,
        file: decl.source.file,
        line: decl.source.line,
        column: decl.source.column,
        hint: `\`tend providers inspect\` shows the provider's types and what it skipped`,
      });
    }
  }
  await closeProviders(providers.values());
  const diagnostics = sortDiagnostics([...loaded.diagnostics, ...warnings]);
  if (!intent) return { ok: false, diagnostics, providers: [], resources: [] };
  const chosen = chooseWorkspaceName({
    flag: request.workspace,
    env: ctx.env['TEND_WORKSPACE'],
    intent: intent.workspace?.name,
    dir,
  });
  return {
    ok: true,
    diagnostics,
    workspace: chosen,
    providers: intent.providers.map((p) => p.name),
    resources: intent.resources.map((r) => ({ address: r.address, dependsOn: r.dependsOn })),
  };
}
