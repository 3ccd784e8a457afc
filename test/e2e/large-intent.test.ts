import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startSandboxProcess, type SandboxHandle } from '../support/sandbox-process.js';

// A tree large enough (over 2 MB) that the built `tend` reads half of its files in a worker thread,
// and whose store keeps a cache of the files' reading (issue 13, item 2): the plan is the same
// whichever thread read a file, from the cache or not, and a diagnostic in a file read by either
// thread or taken from the cache points at the right line and column.

const FILES = 12;
const PER_FILE = 1000;

function resource(i: number, versioning = true): string {
  const n = String(i).padStart(6, '0');
  return [
    'kind: Resource',
    'type: sb.buckets',
    `name: b-${n}`,
    'spec:',
    `  name: bucket-${n}`,
    `  versioning: ${versioning}`,
    '  tags:',
    `    team: team-${i % 17}`,
    `    note: "a longer value so that the tree is over the size a worker thread pays for ${n}"`,
    '',
  ].join('\n');
}

function writeTree(dir: string, url: string): void {
  writeFileSync(
    join(dir, 'provider.yaml'),
    `kind: Provider\nname: sb\ntype: openapi\nspec: ${url}/openapi.json\nendpoint: ${url}\n`,
  );
  for (let f = 0; f < FILES; f++) {
    const docs: string[] = [];
    for (let i = f * PER_FILE; i < (f + 1) * PER_FILE; i++) docs.push(resource(i));
    writeFileSync(join(dir, `r-${String(f).padStart(2, '0')}.yaml`), docs.join('---\n'));
  }
}

let sandbox: SandboxHandle;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandboxProcess();
  dir = mkdtempSync(join(tmpdir(), 'tend-large-'));
  writeTree(dir, sandbox.url);
});

afterAll(async () => {
  await sandbox?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface PlanJson {
  counts: Record<string, number>;
  steps: { address: string; kind: string; desired?: Record<string, unknown> }[];
}

async function plan(env: Record<string, string> = {}): Promise<PlanJson> {
  const r = await runCli(['plan', dir, '--json'], { env, timeoutMs: 120_000 });
  expect(r.code, r.stderr).toBe(2);
  return JSON.parse(r.stdout) as PlanJson;
}

/** The parse cache's entries: one per cached intent file, named by its content key. */
const entries = (cacheDir: string) =>
  readdirSync(cacheDir).filter((n) => /^[0-9a-f]{64}\.json$/.test(n));

describe('a large intent tree through the built tend', () => {
  it('plans the same in one thread, in two, and from the cache; a changed file is read again', async () => {
    const one = await plan({ TEND_PARSE_THREADS: '1' });
    expect(one.counts['create']).toBe(FILES * PER_FILE);
    const cacheDir = join(dir, '.tend', 'cache', 'intent');
    // The single-threaded run filled the cache; empty it so that the next run parses in two threads.
    rmSync(cacheDir, { recursive: true, force: true });
    const two = await plan();
    expect(two).toEqual(one);
    expect(entries(cacheDir)).toHaveLength(FILES);
    // Beside the entries, the record of the files that validated clean (decision 0029).
    expect(readdirSync(cacheDir)).toContain('validated.json');
    const cached = await plan();
    expect(cached).toEqual(one);

    const file = join(dir, 'r-07.yaml');
    const docs: string[] = [];
    for (let i = 7 * PER_FILE; i < 8 * PER_FILE; i++) docs.push(resource(i, i !== 7500));
    writeFileSync(file, docs.join('---\n'));
    const changed = await plan();
    const step = changed.steps.find((s) => s.address === 'sb.buckets/b-007500');
    expect(step?.desired?.['versioning']).toBe(false);
    // The old entry of the changed file is gone, its new one is there (the Provider file is never
    // cached: it may hold credentials).
    expect(entries(cacheDir)).toHaveLength(FILES);
  }, 300_000);

  it('points at file:line:column for an error in a file read by the worker, or from the cache', async () => {
    // Resource 10,500 is the 501st document of r-10.yaml: its `versioning` line is line 5010.
    const file = join(dir, 'r-10.yaml');
    const docs: string[] = [];
    for (let i = 10 * PER_FILE; i < 11 * PER_FILE; i++) {
      docs.push(
        i === 10_500 ? resource(i).replace('versioning: true', 'versioning: "yes"') : resource(i),
      );
    }
    writeFileSync(file, docs.join('---\n'));
    for (const env of [{ TEND_PARSE_THREADS: '1' }, {}, {}] as Record<string, string>[]) {
      const r = await runCli(['plan', dir, '--json'], { env, timeoutMs: 120_000 });
      expect(r.code, r.stderr).toBe(1);
      const out = JSON.parse(r.stdout) as {
        diagnostics: {
          code: string;
          severity: string;
          file: string;
          line: number;
          column: number;
          path?: string;
        }[];
      };
      const d = out.diagnostics.find(
        (x) => x.severity !== 'warning' && x.code.startsWith('schema'),
      );
      expect(d).toMatchObject({
        file: join(dir, 'r-10.yaml'),
        line: 10 * 500 + 6,
        column: 15,
        path: 'spec.versioning',
      });
    }
  }, 300_000);
});
