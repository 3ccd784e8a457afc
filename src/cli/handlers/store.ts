import { resolve } from 'node:path';
import { migrateStoreSchema, storeFlag } from '../../app/index.js';
import type { StoreMigrateOptions } from '../commands/store.js';
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
