import type { Command } from 'commander';

/** The flags of `tend providers inspect`. */
export interface InspectOptions {
  overlay?: string;
  json?: boolean;
  /** `true` when given without a file (the stub goes to stdout), else the file. */
  overlaySkeleton?: string | true;
}

/** The flags of `tend providers probe`. */
export interface ProbeOptions {
  endpoint: string;
  overlay?: string;
  scope: string[];
  type: string[];
  budget?: string;
  out: string;
  journal?: string;
  authHeader?: string;
  authEnv?: string;
  authPrefix?: string;
  yes?: boolean;
  json?: boolean;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `tend providers inspect <spec>`: what Tend would manage from an API description. */
export function registerProvidersCommand(program: Command): void {
  const providers = program
    .command('providers')
    .description('look at what Tend can manage from an API description');
  providers
    .command('inspect')
    .description(
      'report the resource types Tend derives from an OpenAPI (3.x) or Swagger 2.0 document: identity, create-only, output-only and server-owned fields, update verb, parents, and every path it cannot map with the reason (sends nothing to the API)',
    )
    .argument('<spec>', 'the document: a file path or an http(s) URL')
    .option('--overlay <file>', 'an OpenAPI Overlay 1.0 document to apply first')
    .option('--json', 'machine-readable output')
    .option(
      '--overlay-skeleton [file]',
      'write an OpenAPI Overlay 1.0 stub with the decisions inference left open (identity, pagination, envelopes, parameters…) to a new file, or to stdout without one',
    )
    .action(async (spec: string, o: InspectOptions) =>
      (await import('../handlers/providers.js')).inspectHandler(spec, o),
    );
  providers
    .command('probe')
    .description(
      'learn what the document cannot say by asking the platform: creates a few probe objects per type (journaled first, all deleted at the end), and writes what it saw (natural keys, marker places, create-only fields, normalisation, read-after-write) as an OpenAPI Overlay with the evidence of each fact',
    )
    .argument('<document>', 'the OpenAPI or Swagger document: a file path or an http(s) URL')
    .requiredOption('--endpoint <url>', 'the base URL of the API to probe')
    .option('--overlay <file>', 'an overlay to apply first (the structure the document lacks)')
    .option(
      '--scope <param=value>',
      'a path parameter value: the scratch parent the probe works in (repeatable)',
      collect,
      [],
    )
    .option('--type <type>', 'probe only this type (repeatable; default: every type)', collect, [])
    .option('--budget <n>', 'send at most this many requests (default 200)')
    .option('--out <file>', 'the overlay to write (a new file)', 'probe.overlay.yaml')
    .option('--journal <file>', 'the probe journal (default: .tend-probe.sqlite next to --out)')
    .option('--auth-header <name>', 'the header carrying the API credential (with --auth-env)')
    .option('--auth-env <variable>', 'the environment variable holding the credential')
    .option('--auth-prefix <text>', 'put before the credential (e.g. "Bearer ")')
    .option('--yes', 'agree to objects being created and deleted on the platform')
    .option('--json', 'machine-readable output')
    .action(async (document: string, o: ProbeOptions) =>
      (await import('../handlers/providers-probe.js')).probeHandler(document, o),
    );
}
