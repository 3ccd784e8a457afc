// The PowerDNS example (examples/powerdns) as a temporary intent directory pointed at a test's own
// pdns_server, with a `dns` check on every rrset so that what the API accepted is proven in DNS.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { copyExampleFiles, ROOT } from './cli.js';
import type { PdnsHandle } from './pdns.js';

/** The example's endpoint, replaced by the test server's. */
const EXAMPLE_ENDPOINT = 'http://127.0.0.1:8081/api/v1';

/** A temporary copy of an intent directory for PowerDNS. */
export interface PdnsIntent {
  readonly dir: string;
  /** The environment `tend` needs (the API key, as the example's Provider reads it). */
  readonly env: Record<string, string>;
  /** Every document of main.yaml, as plain data. */
  docs(): Record<string, unknown>[];
  /** Rewrites main.yaml with `edit` applied to its text. */
  edit(edit: (text: string) => string): void;
  cleanup(): void;
}

type Doc = Record<string, unknown>;

/**
 * Copies examples/powerdns (the Provider, its specs and overlay, and the resources of main.yaml)
 * into a temporary directory, points the Provider at `pdns`, and gives every rrset a `dns` check
 * asking the server's DNS port for its name and type, expecting its records' contents.
 * `onlyProvider` keeps the Provider document alone (an empty intent, for `tend import`).
 */
export function pdnsIntent(pdns: PdnsHandle, options: { onlyProvider?: boolean } = {}): PdnsIntent {
  const dir = mkdtempSync(join(tmpdir(), 'tend-pdns-intent-'));
  copyExampleFiles(join(ROOT, 'examples', 'powerdns'), dir);
  const main = join(dir, 'main.yaml');
  const docs = parseAllDocuments(readFileSync(main, 'utf8')).map((d) => d.toJS() as Doc);
  const out: Doc[] = [];
  for (const doc of docs) {
    if (doc['kind'] === 'Provider') {
      if (doc['endpoint'] !== EXAMPLE_ENDPOINT) {
        throw new Error(`examples/powerdns: expected endpoint ${EXAMPLE_ENDPOINT}`);
      }
      // The gsqlite3 backend answers concurrent writes with 500 "database is locked" (SQLite has one
      // writer, and PowerDNS gives up at once on a deferred transaction's lock upgrade): one request
      // at a time, as anyone running PowerDNS on SQLite must configure.
      out.push({ ...doc, endpoint: pdns.apiUrl, concurrency: 1 });
      continue;
    }
    if (options.onlyProvider) continue;
    if (doc['type'] === 'pdns.rrsets') {
      const spec = doc['spec'] as { name: string; type: string; records: { content: string }[] };
      const check = {
        name: 'served',
        dns: {
          server: pdns.dnsAddress,
          query: spec.name,
          type: spec.type,
          expect: spec.records.map((r) => r.content),
        },
      };
      out.push({ ...doc, checks: [...((doc['checks'] as unknown[] | undefined) ?? []), check] });
      continue;
    }
    out.push(doc);
  }
  writeFileSync(main, out.map((d) => stringify(d, { lineWidth: 0 })).join('---\n'));
  return {
    dir,
    env: { PDNS_API_KEY: pdns.apiKey },
    docs: () => parseAllDocuments(readFileSync(main, 'utf8')).map((d) => d.toJS() as Doc),
    edit: (edit) => writeFileSync(main, edit(readFileSync(main, 'utf8'))),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
