import type { Command } from 'commander';
import {
  mergeFaults,
  NO_FAULTS,
  SandboxError,
  startSandbox,
  type AuditEntry,
  type FaultSettings,
} from '../../sandbox/index.js';

interface SandboxFlags {
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
  json?: boolean;
}

/** Which fault setting each numeric flag sets. */
const FAULT_FLAGS: Record<string, keyof FaultSettings> = {
  seed: 'seed',
  latency: 'latencyMs',
  latencyJitter: 'latencyJitterMs',
  errorRate: 'errorRate',
  rate429: 'rate429',
  retryAfter: 'retryAfterSeconds',
  timeoutAfterSuccess: 'timeoutAfterSuccessRate',
  eventualConsistency: 'eventualConsistencyMs',
  rateLimit: 'rateLimit',
};

/** `tend sandbox`: serves the sandbox platform until SIGINT or SIGTERM, then closes cleanly. */
export function registerSandboxCommand(program: Command): void {
  program
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
    .option('--eventual-consistency <ms>', 'how long new objects stay missing from reads')
    .option('--rate-limit <rps>', 'requests per second allowed (burst = the same number)')
    .option('--fault-methods <list>', 'comma-separated HTTP methods faults apply to (default all)')
    .option('--state <file>', 'keep state in this file across restarts')
    .option('--api-key-from-env <VAR>', 'require X-API-Key equal to this environment variable')
    .option('--log', 'print one line per mutation')
    .option('--json', 'print machine-readable lines ({"url": ...} first)')
    .action(async (flags: SandboxFlags, command: Command) => {
      // Bad flags are usage errors: commander prints them (with help) and exits 1.
      const fail = (message: string): never =>
        command.error(`error: ${message}`, { exitCode: 1, code: 'tend.sandbox' });
      const port = Number(flags.port);
      if (!/^[0-9]+$/.test(flags.port) || port > 65535) {
        fail(`--port must be an integer from 0 to 65535, got "${flags.port}"`);
      }
      const faults = faultsFromFlags(flags, fail);
      let apiKey: string | undefined;
      if (flags.apiKeyFromEnv !== undefined) {
        apiKey = process.env[flags.apiKeyFromEnv];
        if (!apiKey)
          fail(
            `--api-key-from-env: environment variable ${flags.apiKeyFromEnv} is not set or empty`,
          );
      }
      const print = (line: string) => process.stdout.write(`${line}\n`);

      let running;
      try {
        running = await startSandbox({
          port,
          host: flags.host,
          faults,
          ...(apiKey === undefined ? {} : { apiKey }),
          ...(flags.state === undefined ? {} : { stateFile: flags.state }),
          ...(flags.log
            ? { onAudit: (entry: AuditEntry) => print(logLine(entry, flags.json)) }
            : {}),
        });
      } catch (error) {
        // Not a usage error (a busy port, a damaged state file): no help text, just the reason.
        process.stderr.write(`error: cannot start the sandbox: ${(error as Error).message}\n`);
        process.exitCode = 1;
        return;
      }
      print(
        flags.json ? JSON.stringify({ url: running.url }) : `sandbox listening on ${running.url}`,
      );

      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      await running.close();
      process.exitCode = 0;
    });
}

/** The fault settings the flags ask for, validated; `fail` reports a bad flag and exits. */
function faultsFromFlags(flags: SandboxFlags, fail: (message: string) => never): FaultSettings {
  const partial: Record<string, unknown> = {};
  const flagOf: Record<string, string> = {};
  for (const [flag, setting] of Object.entries(FAULT_FLAGS)) {
    const text = flags[flag as keyof SandboxFlags];
    if (typeof text !== 'string') continue;
    const name = `--${flag.replace(/[A-Z0-9]+/g, (m) => `-${m.toLowerCase()}`)}`;
    const value = text.trim() === '' ? NaN : Number(text);
    if (!Number.isFinite(value)) fail(`${name} must be a number, got "${text}"`);
    partial[setting] = value;
    flagOf[setting] = name;
  }
  if (flags.faultMethods !== undefined) {
    partial.methods = flags.faultMethods.split(',').map((m) => m.trim());
    flagOf.methods = '--fault-methods';
  }
  try {
    return mergeFaults(NO_FAULTS, partial);
  } catch (error) {
    if (!(error instanceof SandboxError) || error.field === undefined) throw error;
    // The message starts with the setting's name; say the flag instead.
    const flag = flagOf[error.field] ?? error.field;
    const problem = error.message.slice(error.field.length).trim();
    return fail(`${flag} ${problem}, got "${String(partial[error.field])}"`);
  }
}

/** One line about a mutation: text for people, JSON with --json. Entries never carry secrets. */
function logLine(entry: AuditEntry, json: boolean | undefined): string {
  const { seq, time, action, type, id, actor, actorKind, intent, motivation } = entry;
  if (json) {
    return JSON.stringify({ seq, time, action, type, id, actor, actorKind, intent, motivation });
  }
  const who = [
    actorKind && `kind=${actorKind}`,
    intent && `intent=${intent}`,
    motivation && `motivation=${motivation}`,
  ].filter(Boolean);
  return [time, action, `${type}/${id}`, `actor=${actor}`, ...who].join(' ');
}
