import type { Command } from 'commander';

/** The flags of `tend providers inspect`. */
export interface InspectOptions {
  overlay?: string;
  json?: boolean;
  /** `true` when given without a file (the stub goes to stdout), else the file. */
  overlaySkeleton?: string | true;
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
}
