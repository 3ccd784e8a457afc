// The PowerDNS example (examples/powerdns) as a temporary intent directory pointed at a test's own
// pdns_server, with a `dns` check on every rrset so that what the API accepted is proven in DNS.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { copyExampleFiles, ROOT } from './cli.js';
import type { PdnsHandle } from './pdns.js';
import { startRecordingServer } from './recording-server.js';

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
 * `onlyProvider` keeps the Provider document alone (an empty intent, for `tend import`); `endpoint`
 * points the Provider elsewhere (a recording proxy in front of the server).
 */
export function pdnsIntent(
  pdns: PdnsHandle,
  options: { onlyProvider?: boolean; endpoint?: string } = {},
): PdnsIntent {
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
      out.push({ ...doc, endpoint: options.endpoint ?? pdns.apiUrl, concurrency: 1 });
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

/** A recording proxy in front of a pdns_server's webserver: every request Tend sends, in order. */
export interface PdnsProxy {
  /** The Provider endpoint through the proxy (`http://127.0.0.1:<port>/api/v1`). */
  readonly apiUrl: string;
  /** `METHOD /path` of every request forwarded since the last `clear`. */
  requests(): string[];
  /** The requests that change something (anything but GET). */
  writes(): string[];
  clear(): void;
  stop(): Promise<void>;
}

/** Starts a proxy that forwards every request to `pdns` as it came and records it. */
export async function startPdnsProxy(pdns: PdnsHandle): Promise<PdnsProxy> {
  const server = await startRecordingServer((req, res) => {
    const headers: Record<string, string> = {};
    for (const name of ['x-api-key', 'content-type', 'accept']) {
      const v = req.headers[name];
      if (typeof v === 'string') headers[name] = v;
    }
    fetch(`${pdns.webUrl}${req.url}`, {
      method: req.method,
      headers,
      ...(req.body !== '' ? { body: req.body } : {}),
    })
      .then(async (r) => {
        const body = Buffer.from(await r.arrayBuffer());
        const type = r.headers.get('content-type');
        res.writeHead(r.status, type ? { 'content-type': type } : {});
        res.end(body);
      })
      .catch((e: unknown) => {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(String(e));
      });
  });
  const line = (r: { method: string; url: string }) => `${r.method} ${r.url.split('?')[0]}`;
  return {
    apiUrl: `${server.url}/api/v1`,
    requests: () => server.requests.map(line),
    writes: () => server.requests.filter((r) => r.method !== 'GET').map(line),
    clear: () => server.clear(),
    stop: () => server.stop(),
  };
}
