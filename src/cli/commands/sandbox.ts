import { Argument, type Command } from 'commander';
// The actors' names only (a module of constants): the sandbox itself loads when a command runs.
import { SCRIPTED_ACTORS, type ScriptedActor } from '../../sandbox/actors.js';

/** The flags of `tend sandbox`. */
export interface SandboxFlags {
  port: string;
  host: string;
  seed?: string;
  latency?: string;
  latencyJitter?: string;
  errorRate?: string;
  rate429?: string;
  retryAfter?: string;
  timeoutAfterSuccess?: string;
  eventualConsistency?: string;
  rateLimit?: string;
  faultMethods?: string;
  state?: string;
  apiKeyFromEnv?: string;
  log?: boolean;
  requestLog?: string;
  json?: boolean;
}

/**
 * `tend sandbox`: serves the sandbox platform until SIGINT or SIGTERM, then closes cleanly.
 * `tend sandbox actor <name>`: one change by a scripted actor against a running sandbox.
 */
export function registerSandboxCommand(program: Command): void {
  const sandbox = program
    .command('sandbox')
    .description('run the sandbox platform: a local stand-in for a cloud, with switchable faults')
    .option('--port <n>', 'port to listen on (0 picks a free port)', '7781')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--seed <n>', 'seed of the fault dice (same seed, same faults)')
    .option('--latency <ms>', 'delay before handling each API request')
    .option('--latency-jitter <ms>', 'up to this much more delay, drawn per request')
    .option('--error-rate <0..1>', 'chance of answering 500/503 before doing anything')
    .option('--rate-429 <0..1>', 'chance of answering 429 before doing anything')
    .option('--retry-after <s>', 'Retry-After seconds of injected 429s (default 1)')
    .option(
      '--timeout-after-success <0..1>',
      'chance of committing a mutation, then never answering',
    )
    .option(
      '--eventual-consistency <ms>',
      'how long new objects stay missing from reads; given (0 too), the document no longer promises consistent reads and the setting may change at run time',
    )
    .option('--rate-limit <rps>', 'requests per second allowed (burst = the same number)')
    .option('--fault-methods <list>', 'comma-separated HTTP methods faults apply to (default all)')
    .option('--state <file>', 'keep state in this file across restarts')
    .option('--api-key-from-env <VAR>', 'require X-API-Key equal to this environment variable')
    .option('--log', 'print one line per mutation')
    .option(
      '--request-log <file>',
      'append one JSON line per API request to this file (time, method, path, status, User-Agent; never a key or a body)',
    )
    .option('--json', 'print machine-readable lines ({"url": ...} first)')
    .action(async (flags: SandboxFlags, command: Command) =>
      (await import('../handlers/sandbox.js')).sandboxHandler(flags, command),
    );
  registerActorCommand(sandbox);
}

/** The flags of `tend sandbox actor`. */
export interface ActorFlags {
  service: string;
  url: string;
  apiKeyFromEnv?: string;
  load?: string;
  perReplica?: string;
  max?: string;
  target?: string;
  step?: string;
  image?: string;
  field?: string;
  value?: string;
  actor?: string;
  actorKind?: string;
  intent?: string;
  motivation?: string;
  ref?: string;
  ttl?: string;
  json?: boolean;
}

const DEFAULT_URL = 'http://127.0.0.1:7781';

function registerActorCommand(sandbox: Command): void {
  sandbox
    .command('actor')
    .description(
      'act once as a scripted actor (autoscaler, cost-optimiser, scanner, console) on a running sandbox; prints what it did and the audit entry',
    )
    .addArgument(new Argument('<actor>', 'who acts').choices(SCRIPTED_ACTORS))
    .requiredOption('--service <name-or-id>', 'the service to act on: its id (svc-…) or name')
    .option('--url <url>', 'the sandbox', DEFAULT_URL)
    .option('--api-key-from-env <VAR>', 'send X-API-Key from this environment variable')
    .option('--load <n>', 'autoscaler: the load now (replicas = ceil(load / per-replica))')
    .option('--per-replica <n>', 'autoscaler: the load one replica carries (default 100)')
    .option('--max <n>', 'autoscaler: the most replicas it asks for (default 10)')
    .option('--target <n>', 'cost-optimiser: the replicas the budget pays for')
    .option('--step <n>', 'cost-optimiser: at most this many fewer per action')
    .option('--image <tag>', 'scanner: the patched tag (1.25.4) or image (nginx:1.25.4)')
    .option('--field <name>', 'console: the field to set')
    .option('--value <v>', 'console: its value (JSON when it parses as JSON, else text)')
    .option('--actor <name>', 'who acts (console: the person; default none, an anonymous click)')
    .option('--actor-kind <kind>', 'scanner: controller (default) or agent')
    .option('--intent <word>', 'console: X-Tend-Intent (default none)')
    .option('--motivation <text>', 'console: X-Tend-Motivation (default none)')
    .option('--ref <text>', 'the motivation reference (scanner: the CVE id)')
    .option('--ttl <duration>', 'autoscaler: how long its reason holds (default 15m)')
    .option('--json', 'print the result as one JSON object')
    .action(async (name: ScriptedActor, local: ActorFlags, command: Command) =>
      (await import('../handlers/sandbox.js')).actorHandler(name, local, command),
    );
}
