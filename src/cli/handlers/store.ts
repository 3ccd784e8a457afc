import { resolve } from 'node:path';
import type { StoreCopyReport } from '../../app/index.js';
import { copyStore, describeCounts, migrateStoreSchema, storeFlag } from '../../app/index.js';
import type { StoreCopyOptions, StoreMigrateOptions } from '../commands/store.js';
import type { Output } from '../common.js';
import { cliContext, fail, output } from '../common.js';
import { EXIT } from '../exit-codes.js';

/** `tend store migrate [dir]`, run: exit 0 migrated or up to date, 1 refused or failed. */
export async function storeMigrateHandler(dir: string, o: StoreMigrateOptions): Promise<void> {
  const out = output(o.json);
  try {
    const r = await migrateStoreSchema(cliContext(), {
      dir: resolve(dir),
      ...(o.store ? { store: storeFlag(o.store) } : {}),
    });
    if (out.json) out.data({ ok: true, ...r });
    else if (r.verdict === 'up-to-date') {
      out.line(`the ${r.kind} store is up to date: schema version ${r.to}`);
    } else {
      out.line(
        out.style.green(`migrated the ${r.kind} store from schema version ${r.from} to ${r.to}`),
      );
    }
    process.exitCode = EXIT.ok;
  } catch (e) {
    fail(out, e);
  }
}

/**
 * `tend store copy <from> <to>`, run: exit 0 copied (and the copy's ledger verifies, or no key was
 * found to check it with), 1 refused, failed, or copied with a ledger that does not verify.
 */
export async function storeCopyHandler(
  from: string,
  to: string,
  o: StoreCopyOptions,
): Promise<void> {
  const out = output(o.json);
  try {
    const r = await copyStore(cliContext(), {
      from: storeFlag(from),
      to: storeFlag(to),
      ...(o.workspace !== undefined ? { workspace: o.workspace } : {}),
      ...(o.force ? { force: true } : {}),
    });
    if (out.json) out.data({ ok: r.ledger.ok, ...r });
    else renderCopy(out, r);
    process.exitCode = r.ledger.ok ? EXIT.ok : EXIT.error;
  } catch (e) {
    fail(out, e);
  }
}

function renderCopy(out: Output, r: StoreCopyReport): void {
  const which = r.workspace === undefined ? 'the workspace' : `workspace ${r.workspace}`;
  out.line(
    out.style.green(
      `copied ${which} from ${r.from.kind} ${r.from.store} to ${r.to.kind} ${r.to.store}`,
    ),
  );
  out.line(`  ${describeCounts(r.copied, true)}`);
  if (r.replaced) out.line(`  replaced what the target held: ${describeCounts(r.replaced)}`);
  if (!r.ledger.ok) {
    out.line(out.style.red(`the copy's ledger does not verify: ${r.ledger.reason}`));
    out.err('  what to do: run `tend ledger verify` on the source with the key that wrote it');
  } else if (r.ledger.keyId !== undefined) {
    out.line(
      `  ledger intact on the target: ${r.ledger.entries} entries, key id ${r.ledger.keyId}`,
    );
  } else {
    out.line(
      `  ledger links intact on the target: ${r.ledger.entries} entries (no ledger key here to check their signatures)`,
    );
  }
}
