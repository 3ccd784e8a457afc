import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What an intent fixture declares. */
export interface IntentFixture {
  /** The intent directory. */
  readonly dir: string;
  /** Declared resources: half `sb.networks`, half `sb.buckets`, none referencing another. */
  readonly count: number;
}

/** How the fixture's Provider document connects. */
export interface FixtureProvider {
  /** Base URL of the sandbox. */
  readonly endpoint: string;
  readonly concurrency: number;
  /** Requests per second; 0 for no limit. */
  readonly rateLimit: number;
}

/** Resources per intent file (large intents are split over files, as people write them). */
const PER_FILE = 1000;

/**
 * Writes an intent directory with `count` independent resources: even ones are networks (server id,
 * found by marker, created with an idempotency key), odd ones buckets (the name is the identity). No
 * references, so every create may run in parallel: the provider's limits are the only bound.
 */
export function writeIntentFixture(
  dir: string,
  count: number,
  provider: FixtureProvider,
): IntentFixture {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'provider.yaml'),
    [
      'kind: Provider',
      'name: sb',
      'type: openapi',
      `spec: ${provider.endpoint}/openapi.json`,
      `endpoint: ${provider.endpoint}`,
      `concurrency: ${provider.concurrency}`,
      `rateLimit: ${provider.rateLimit}`,
      'timeoutMs: 30000',
      '',
    ].join('\n'),
  );
  for (let file = 0; file * PER_FILE < count; file++) {
    const docs: string[] = [];
    for (let i = file * PER_FILE; i < Math.min(count, (file + 1) * PER_FILE); i++) {
      docs.push(resourceDoc(i));
    }
    writeFileSync(join(dir, `resources-${String(file).padStart(3, '0')}.yaml`), docs.join('---\n'));
  }
  return { dir, count };
}

/** The address of the i-th fixture resource. */
export function fixtureAddress(i: number): `${string}/${string}` {
  const n = String(i).padStart(6, '0');
  return i % 2 === 0 ? `sb.networks/n-${n}` : `sb.buckets/b-${n}`;
}

function resourceDoc(i: number): string {
  const n = String(i).padStart(6, '0');
  if (i % 2 === 0) {
    return [
      'kind: Resource',
      'type: sb.networks',
      `name: n-${n}`,
      'spec:',
      `  name: net-${n}`,
      `  cidr: 10.${(i >> 8) & 255}.${i & 255}.0/24`,
      `  tags: { team: t${i % 10}, bench: "yes" }`,
      '',
    ].join('\n');
  }
  return [
    'kind: Resource',
    'type: sb.buckets',
    `name: b-${n}`,
    'spec:',
    `  name: tend-bench-${n}`,
    `  versioning: ${i % 3 === 0}`,
    `  tags: { team: t${i % 10} }`,
    '',
  ].join('\n');
}
