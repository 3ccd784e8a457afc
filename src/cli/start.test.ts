import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../../test/support/cli.js';
import { EXPLAIN_ENTRIES } from '../app/index.js';
import { EXPLAIN_LIMIT } from './commands/explain.js';

// Fast start (issue 13, item 4): `tend --help` and `tend <command> --help` register every command
// but load none of what the commands run; a command loads its own handler and nothing of another's.
// Drives the built CLI (`npm run build` first) with a module hook that records every file loaded.

const DIST = resolve(import.meta.dirname, '..', '..', 'dist');

let dir: string;
let hook: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tend-start-'));
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (url.startsWith('file:')) appendFileSync(process.env.TEND_LOADED_LOG, url + '\\n');
  return next(url, context);
}
`,
  );
  writeFileSync(
    join(dir, 'register.mjs'),
    `import { register } from 'node:module';
register(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});
`,
  );
  hook = join(dir, 'register.mjs');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The files under dist/ (relative to it) and the packages that `tend …args` loaded. */
async function loaded(
  name: string,
  args: string[],
): Promise<{ code: number | null; dist: string[]; packages: string[] }> {
  const log = join(dir, `${name}.log`);
  writeFileSync(log, '');
  const r = await runCli(args, {
    env: { NODE_OPTIONS: `--import=${pathToFileURL(hook).href}`, TEND_LOADED_LOG: log },
  });
  const files = readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((u) => fileURLToPath(u));
  const dist = files.filter((f) => f.startsWith(DIST)).map((f) => relative(DIST, f));
  const packages = [
    ...new Set(
      files.flatMap((f) => {
        const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f);
        return m ? [m[1]!] : [];
      }),
    ),
  ];
  return { code: r.code, dist: [...new Set(dist)].sort(), packages };
}

/** What registering the commands may load: the entry, the command definitions, shared flags. */
const REGISTRATION =
  /^cli\/(main|flags|exit-codes)\.js$|^cli\/commands\/[a-z-]+\.js$|^sandbox\/actors\.js$/;

describe('tend start-up loads only what the command uses', () => {
  const helpCases: { name: string; args: string[]; reason: string }[] = [
    { name: 'help', args: ['--help'], reason: 'the command list' },
    { name: 'version', args: ['--version'], reason: 'the version from package.json' },
    { name: 'plan-help', args: ['plan', '--help'], reason: "one command's flags" },
    {
      name: 'actor-help',
      args: ['sandbox', 'actor', '--help'],
      reason: 'the actor names (choices)',
    },
    { name: 'unknown', args: ['no-such-command'], reason: 'a usage error' },
  ];
  it.each(helpCases)('$args: $reason, nothing of the engine', async ({ name, args }) => {
    const r = await loaded(name, args);
    expect(r.dist.length).toBeGreaterThan(10); // the hook saw the command definitions
    expect(r.dist.filter((f) => !REGISTRATION.test(f))).toEqual([]);
    expect(r.packages).toEqual(['commander']);
  });

  it('a command loads its own handler and not the others', async () => {
    const r = await loaded('validate', ['validate', join(dir, 'no-such-dir'), '--json']);
    expect(r.code).toBe(1);
    expect(r.dist).toContain('cli/handlers/validate.js');
    expect(r.dist.filter((f) => f.startsWith('cli/handlers/'))).toEqual([
      'cli/handlers/validate.js',
    ]);
  });

  it('tend sandbox runs without the engine side (app, engine, store, providers)', async () => {
    const r = await loaded('sandbox-bad', ['sandbox', '--port', 'x']);
    expect(r.code).toBe(1);
    expect(r.dist).toContain('cli/handlers/sandbox.js');
    expect(r.dist.filter((f) => /^(app|engine|store|providers|intent)\//.test(f))).toEqual([]);
  });
});

// Heavy packages are loaded where they are used (docs/decisions/0033-lazy-modules.md): `pg` by a
// PostgreSQL provider or a sql check, the Swagger 2.0 converter by a Swagger 2.0 document, `qs` by a
// form-encoded request, `dns-packet` by a dns check, `diff` by accept and propose. A command on an
// OpenAPI 3 workspace loads none of them; the PostgreSQL and Swagger 2.0 examples show that the hook
// sees each package when it is used.
const LAZY = ['pg', 'swagger2openapi', 'qs', 'dns-packet', 'diff'];

describe('heavy packages load only where they are used', () => {
  let sandboxIntent: string;

  beforeAll(() => {
    // The quickstart (an http and a cel check) on the sandbox's OpenAPI 3.1 document, read from a
    // file: validate reads the document and the intent and sends nothing to the platform.
    sandboxIntent = join(dir, 'quickstart');
    cpSync(join(ROOT, 'examples', 'quickstart'), sandboxIntent, { recursive: true });
    mkdirSync(join(sandboxIntent, 'specs'));
    cpSync(join(ROOT, 'src', 'sandbox', 'openapi.json'), join(sandboxIntent, 'specs', 'sb.json'));
    const provider = readFileSync(join(sandboxIntent, 'provider.yaml'), 'utf8');
    writeFileSync(
      join(sandboxIntent, 'provider.yaml'),
      provider.replace(/^spec: .*$/m, 'spec: ./specs/sb.json'),
    );
  });

  it('validate of an OpenAPI 3 workspace loads none of them', async () => {
    const r = await loaded('validate-openapi', ['validate', sandboxIntent, '--json']);
    expect(r.code).toBe(0);
    expect(r.packages).toContain('@apidevtools/json-schema-ref-parser'); // the document was read
    expect(r.packages.filter((p) => LAZY.includes(p))).toEqual([]);
    // Dereferencing no longer loads @readme/openapi-parser and its validator (decision 0035). (The
    // hook sees ES modules only: Ajv, CommonJS, is loaded by intent validation all the same.)
    expect(r.packages).not.toContain('@readme/openapi-parser');
  });

  const usedCases: { name: string; example: string; uses: string; reason: string }[] = [
    {
      name: 'validate-postgres',
      example: 'postgres',
      uses: 'pg',
      reason: 'a PostgreSQL provider loads the driver',
    },
    {
      name: 'validate-swagger2',
      example: 'alertmanager',
      uses: 'swagger2openapi',
      reason: 'a Swagger 2.0 document loads the converter',
    },
  ];
  it.each(usedCases)('examples/$example: $reason', async ({ name, example, uses }) => {
    const r = await loaded(name, ['validate', join(ROOT, 'examples', example), '--json']);
    expect(r.code).toBe(0);
    expect(r.packages.filter((p) => LAZY.includes(p))).toEqual([uses]);
  });
});

describe('defaults written in the command definitions', () => {
  it('explain --limit defaults to the application default', () => {
    expect(EXPLAIN_LIMIT).toBe(EXPLAIN_ENTRIES);
  });
});
