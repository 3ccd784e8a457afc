import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Diagnostic } from '../core/index.js';
import type { FastDocument } from './fast-yaml.js';
import { readFast } from './fast-yaml.js';
import type { ParseCache } from './parse-cache.js';
import { parseCacheKey } from './parse-cache.js';
import { fastDocuments, parseWithPositions } from './parse-documents.js';
import type { ParsedDocument } from './parse-documents.js';
import type { ParseWorkerInput, ParseWorkerOutput } from './parse-worker.js';
import type { IntentFile } from './read-files.js';

/** One file's documents and problems. */
export interface ParsedFile {
  readonly documents: ParsedDocument[];
  readonly diagnostics: Diagnostic[];
}

/** Below this many bytes to parse, a worker thread costs more to start than it saves. */
export const PARALLEL_MIN_BYTES = 2 * 1024 * 1024;

// The compiled worker; absent when Tend runs from its TypeScript sources (the tests), which then
// parse on the main thread only.
const WORKER = fileURLToPath(new URL('./parse-worker.js', import.meta.url));
const workerAvailable = existsSync(WORKER);

/** What parsing a tree may use. */
export interface ParseFilesOptions {
  readonly cache?: ParseCache;
  /** Use a worker thread for a large tree (default: when there are two cores or more). */
  readonly threads?: boolean;
}

/**
 * Splits files into two shares of about equal size (largest first, each to the smaller share): the
 * worker's and the main thread's.
 */
export function splitBySize(sizes: readonly number[]): [number[], number[]] {
  const order = sizes.map((_, i) => i).sort((a, b) => sizes[b]! - sizes[a]! || a - b);
  const shares: [number[], number[]] = [[], []];
  const totals = [0, 0];
  for (const i of order) {
    const to = totals[0]! <= totals[1]! ? 0 : 1;
    shares[to].push(i);
    totals[to]! += sizes[i]!;
  }
  shares[0].sort((a, b) => a - b);
  shares[1].sort((a, b) => a - b);
  return shares;
}

function runWorker(input: ParseWorkerInput): Promise<ParseWorkerOutput> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: input });
    worker.once('message', (out: ParseWorkerOutput) => {
      resolve(out);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the parse worker exited with ${code}`)));
  });
}

/**
 * Parses every intent file: from the cache when an unchanged file is in it, else the fast way — on a
 * large tree, half of the files in a worker thread while the main thread reads the other half — and
 * the position-keeping way for a file the fast reading refuses. The result is in the files' order and
 * the same whatever thread read a file. Returns the cache keys in use too (to prune the others), and
 * each file's key in the files' order (empty strings without a cache).
 */
export async function parseIntentFiles(
  files: readonly IntentFile[],
  options: ParseFilesOptions = {},
): Promise<{ parsed: ParsedFile[]; keys: Set<string>; fileKeys: readonly string[] }> {
  const { cache } = options;
  const keys = files.map((f) => (cache ? parseCacheKey(f.text) : ''));
  // Per file: documents read the fast way; null when the fast reading refused; undefined until read.
  const fast: (FastDocument[] | null | undefined)[] = files.map((_, i) =>
    cache ? cache.get(keys[i]!) : undefined,
  );
  const misses = files.map((_, i) => i).filter((i) => fast[i] === undefined);
  const missBytes = misses.reduce((n, i) => n + files[i]!.text.length, 0);
  const readHere = (i: number): void => {
    const documents = readFast(files[i]!.text);
    if (documents !== undefined) cache?.put(keys[i]!, documents);
    fast[i] = documents ?? null;
  };
  const parallel =
    (options.threads ?? true) &&
    workerAvailable &&
    missBytes >= PARALLEL_MIN_BYTES &&
    availableParallelism() > 1;
  if (parallel) {
    const [theirs, mine] = splitBySize(misses.map((i) => files[i]!.text.length)).map((share) =>
      share.map((k) => misses[k]!),
    ) as [number[], number[]];
    const cacheDir = cache?.directory();
    const working = runWorker({
      texts: theirs.map((i) => files[i]!.text),
      keys: theirs.map((i) => keys[i]!),
      ...(cacheDir !== undefined ? { cacheDir } : {}),
    }).then(
      (out) => out,
      () => undefined,
    );
    for (const i of mine) readHere(i);
    const out = await working;
    theirs.forEach((i, k) => {
      // A worker that failed (it should not) leaves its share to the main thread.
      if (out === undefined) readHere(i);
      else fast[i] = out[k] ?? null;
    });
  } else {
    for (const i of misses) readHere(i);
  }
  const parsed = files.map((f, i): ParsedFile => {
    const documents = fast[i];
    return documents
      ? { documents: fastDocuments(f.path, f.text, documents), diagnostics: [] }
      : parseWithPositions(f.path, f.text);
  });
  return { parsed, keys: new Set(keys), fileKeys: keys };
}
