// The functions a V8 CPU profile (`node --cpu-prof`) spent most time in, by self time: where the
// next improvement should start. Also a command:
//
//   node dist/bench/cpuprofile-top.js <file.cpuprofile> [n]
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The parts of a `.cpuprofile` this reads. */
interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: {
      readonly functionName: string;
      readonly url: string;
      readonly lineNumber: number;
    };
  }[];
  readonly samples?: readonly number[];
  readonly timeDeltas?: readonly number[];
}

/** One function and the time spent in it, callees excluded. */
export interface HotFunction {
  /** `name (file:line)`; V8's own entries as it names them: `(garbage collector)`, `(program)`. */
  readonly name: string;
  readonly selfMs: number;
  /** Share of the profile's busy time (idle excluded). */
  readonly share: number;
}

/**
 * The `n` functions with the most self time. Time is summed per function (name, file, line) over
 * every node of the call tree it appears in; `(idle)` (waiting for I/O) is left out of the ranking
 * and of the total the shares are of.
 */
export function topSelfTime(profile: CpuProfile, n = 5): HotFunction[] {
  const keyOf = new Map<number, string>();
  for (const node of profile.nodes) {
    const f = node.callFrame;
    const name = f.functionName || '(anonymous)';
    const where = f.url ? ` (${shortUrl(f.url)}:${f.lineNumber + 1})` : '';
    keyOf.set(node.id, `${name}${where}`);
  }
  const self = new Map<string, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // timeDeltas[i] is the time before sample i: the time of sample i is the next delta.
  for (let i = 0; i < samples.length; i++) {
    const key = keyOf.get(samples[i]!) ?? '(unknown)';
    const us = deltas[i + 1] ?? 0;
    self.set(key, (self.get(key) ?? 0) + us);
  }
  self.delete('(idle)');
  let total = 0;
  for (const us of self.values()) total += us;
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, us]) => ({ name, selfMs: us / 1000, share: total > 0 ? us / total : 0 }));
}

/** Reads a `.cpuprofile` file and ranks it. */
export function topOfFile(file: string, n = 5): HotFunction[] {
  return topSelfTime(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, n);
}

/** `file:///…/node_modules/yaml/dist/parse/lexer.js` → `yaml/dist/parse/lexer.js`; ours from dist/. */
function shortUrl(url: string): string {
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) return url.slice(nm + '/node_modules/'.length);
  const dist = url.lastIndexOf('/dist/');
  if (dist >= 0) return url.slice(dist + '/dist/'.length);
  return url.startsWith('node:') ? url : basename(url);
}

/** One line per function: `  12.3%  456 ms  name (file:line)`. */
export function formatTop(top: readonly HotFunction[]): string[] {
  return top.map(
    (f) =>
      `${(f.share * 100).toFixed(1).padStart(5)}%  ${Math.round(f.selfMs).toLocaleString('en-US').padStart(6)} ms  ${f.name}`,
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, n] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node dist/bench/cpuprofile-top.js <file.cpuprofile> [n]\n');
    process.exitCode = 2;
  } else {
    for (const line of formatTop(topOfFile(file, n ? Number(n) : 5))) {
      process.stdout.write(`${line}\n`);
    }
  }
}
