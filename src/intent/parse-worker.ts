// A worker thread that reads intent files the fast way (fast-yaml.ts) for the main thread, which reads
// the others meanwhile (parse-files.ts): on a large tree the second core halves the parsing time. It
// writes the cache entries of what it read itself, so that the main thread never stringifies them.
import { parentPort, workerData } from 'node:worker_threads';
import type { FastDocument } from './fast-yaml.js';
import { readFast } from './fast-yaml.js';
import { writeEntry } from './parse-cache.js';

/** What the main thread hands over. */
export interface ParseWorkerInput {
  readonly texts: readonly string[];
  /** Cache keys of the texts, and the cache directory (absent: no cache). */
  readonly keys: readonly string[];
  readonly cacheDir?: string;
}

/** Per text: its documents, or null when it must be read by the position-keeping parser. */
export type ParseWorkerOutput = (FastDocument[] | null)[];

const input = workerData as ParseWorkerInput;
const out: ParseWorkerOutput = input.texts.map((text, i) => {
  const fast = readFast(text);
  if (fast !== undefined && input.cacheDir !== undefined) {
    writeEntry(input.cacheDir, input.keys[i]!, fast);
  }
  return fast ?? null;
});
parentPort?.postMessage(out);
