import type { Command } from 'commander';
import {
  ActorError,
  autoscaler,
  consoleEdit,
  costOptimiser,
  mergeFaults,
  NO_FAULTS,
  sandboxClient,
  SandboxError,
  scanner,
  startSandbox,
  type ActorResult,
  type AuditEntry,
  type FaultSettings,
  type SandboxClient,
  type ScriptedActor,
} from '../../sandbox/index.js';
import type { ActorFlags, SandboxFlags } from '../commands/sandbox.js';

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

type ActorFlag = Exclude<keyof ActorFlags, 'service' | 'url' | 'apiKeyFromEnv' | 'json'>;

/** The flags each actor needs and the ones it may take (any other actor flag is a usage error). */
const ACTOR_FLAGS: Record<ScriptedActor, { needs: ActorFlag[]; takes: ActorFlag[] }> = {
  autoscaler: { needs: ['load'], takes: ['perReplica', 'max', 'ref', 'ttl', 'actor'] },
  'cost-optimiser': { needs: ['target'], takes: ['step', 'ref', 'actor'] },
  scanner: { needs: ['image', 'ref'], takes: ['actor', 'actorKind'] },
  console: { needs: ['field', 'value'], takes: ['actor', 'intent', 'motivation'] },
};

/** The flag that sets each actor option (the scanner's CVE id comes from --ref). */
const FLAG_OF_OPTION: Record<string, string> = {
  perReplica: '--per-replica',
  actorKind: '--actor-kind',
  cve: '--ref',
  patch: '--field',
};

/** The parent's flags that `tend sandbox actor` reads too (commander hands them to the parent). */
const SHARED_FLAGS = new Set(['json', 'apiKeyFromEnv']);

/**
 * The actor's flags, with the two it shares with `tend sandbox` (which commander gives the parent
 * when they follow `actor`); a server flag given here is a usage error rather than silently ignored.
 */
function actorFlags(
  local: ActorFlags,
  command: Command,
  fail: (message: string) => never,
): ActorFlags {
  const parent = command.parent;
  if (!parent) return local;
  for (const option of parent.options) {
    const key = option.attributeName();
    if (parent.getOptionValueSource(key) === 'cli' && !SHARED_FLAGS.has(key)) {
      fail(
        `${option.long} is a flag of \`tend sandbox\` (the server), not of \`tend sandbox actor\``,
      );
    }
  }
  const shared = parent.opts<{ json?: boolean; apiKeyFromEnv?: string }>();
  const json = local.json ?? shared.json;
  const apiKeyFromEnv = local.apiKeyFromEnv ?? shared.apiKeyFromEnv;
  return {
    ...local,
    ...(json ? { json } : {}),
    ...(apiKeyFromEnv === undefined ? {} : { apiKeyFromEnv }),
  };
}

/** The scripted change the flags ask for, checked: a flag the actor needs is there, no flag it ignores. */
function actorRun(
  name: ScriptedActor,
  flags: ActorFlags,
  fail: (message: string) => never,
): (client: SandboxClient, service: string) => Promise<ActorResult> {
  const { needs, takes } = ACTOR_FLAGS[name];
  const flag = (key: string) => FLAG_OF_OPTION[key] ?? `--${key}`;
  for (const key of Object.keys(flags) as (keyof ActorFlags)[]) {
    if (key === 'service' || key === 'url' || SHARED_FLAGS.has(key)) continue;
    if (!(needs as string[]).includes(key) && !(takes as string[]).includes(key)) {
      fail(
        `${flag(key)} does not apply to ${name} (it takes ${[...needs, ...takes].map(flag).join(', ')})`,
      );
    }
  }
  const missing = needs.filter((key) => flags[key] === undefined);
  if (missing.length > 0) fail(`${name} needs ${missing.map(flag).join(' and ')}`);
  const number = (key: 'load' | 'perReplica' | 'max' | 'target' | 'step'): number | undefined => {
    const text = flags[key];
    if (text === undefined) return undefined;
    const value = text.trim() === '' ? NaN : Number(text);
    if (!Number.isFinite(value)) fail(`${flag(key)} must be a number, got "${text}"`);
    return value;
  };
  const common = { ...(flags.actor === undefined ? {} : { actor: flags.actor }) };
  const ref = flags.ref === undefined ? {} : { ref: flags.ref };
  switch (name) {
    case 'autoscaler': {
      const perReplica = number('perReplica');
      const max = number('max');
      const options = {
        ...common,
        ...ref,
        load: number('load')!,
        ...(perReplica === undefined ? {} : { perReplica }),
        ...(max === undefined ? {} : { max }),
        ...(flags.ttl === undefined ? {} : { ttl: flags.ttl }),
      };
      return (client, service) => autoscaler(client, service, options);
    }
    case 'cost-optimiser': {
      const step = number('step');
      const options = {
        ...common,
        ...ref,
        target: number('target')!,
        ...(step === undefined ? {} : { step }),
      };
      return (client, service) => costOptimiser(client, service, options);
    }
    case 'scanner': {
      const kind = flags.actorKind;
      if (kind !== undefined && !isScannerKind(kind)) {
        fail(`--actor-kind of a scanner is controller or agent, got "${kind}"`);
      }
      const options = {
        ...common,
        image: flags.image!,
        cve: flags.ref!,
        ...(kind === undefined ? {} : { actorKind: kind }),
      };
      return (client, service) => scanner(client, service, options);
    }
    case 'console': {
      const options = {
        ...common,
        patch: { [flags.field!]: valueOf(flags.value!) },
        ...(flags.intent === undefined ? {} : { intent: flags.intent }),
        ...(flags.motivation === undefined ? {} : { motivation: flags.motivation }),
      };
      return (client, service) => consoleEdit(client, service, options);
    }
  }
}

function isScannerKind(kind: string): kind is 'controller' | 'agent' {
  return kind === 'controller' || kind === 'agent';
}

/** `--value`: JSON when it parses as JSON (`5`, `true`, `{"a":"b"}`), else the text itself. */
function valueOf(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** An actor's complaint about an option, said with the flag (`ttl "x" …` → `--ttl "x" …`). */
function withFlag(error: ActorError): string {
  const option = error.option ?? '';
  const flag = FLAG_OF_OPTION[option] ?? `--${option}`;
  return error.message.startsWith(option)
    ? `${flag}${error.message.slice(option.length)}`
    : `${flag}: ${error.message}`;
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  const text = (e: unknown) => (e instanceof Error ? e.message : String(e));
  return cause === undefined ? text(error) : `${text(error)} (${text(cause)})`;
}

/** What an actor did, for people: the decision, the headers sent, the audit entry. */
function describeResult(name: ScriptedActor, result: ActorResult): string[] {
  const { plan } = result;
  const label = typeof result.before['name'] === 'string' ? ` (${result.before['name']})` : '';
  const target = `services/${plan.service}${label}`;
  const headers = Object.entries(plan.headers).map(([k, v]) => `${k}: ${v}`);
  if (!result.acted) return [`${name} left ${target} alone: ${plan.reason}`];
  return [
    `${name} changed ${target}: ${plan.reason}`,
    `  sent:  ${headers.length > 0 ? headers.join(', ') : 'no attribution headers (an anonymous change)'}`,
    `  audit: ${result.audit ? `#${result.audit.seq} ${logLine(result.audit, false)}` : 'no entry (the sandbox saw no change)'}`,
  ];
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

/** `tend sandbox`, run: serves until SIGINT or SIGTERM. */
export async function sandboxHandler(flags: SandboxFlags, command: Command): Promise<void> {
  // Bad flags are usage errors: commander prints them (with help) and exits 1.
  const fail = (message: string): never =>
    command.error(`error: ${message}`, { exitCode: 1, code: 'tend.sandbox' });
  const port = Number(flags.port);
  if (!/^[0-9]+$/.test(flags.port) || port > 65535) {
    fail(`--port must be an integer from 0 to 65535, got "${flags.port}"`);
  }
  const faults = faultsFromFlags(flags, fail);
  if (flags.requestLog !== undefined && flags.requestLog.trim() === '') {
    fail('--request-log needs a file to append to, got ""');
  }
  let apiKey: string | undefined;
  if (flags.apiKeyFromEnv !== undefined) {
    apiKey = process.env[flags.apiKeyFromEnv];
    if (!apiKey)
      fail(`--api-key-from-env: environment variable ${flags.apiKeyFromEnv} is not set or empty`);
  }
  const print = (line: string) => process.stdout.write(`${line}\n`);

  let running;
  try {
    running = await startSandbox({
      port,
      host: flags.host,
      faults,
      // Given at all (0 too), eventual consistency may be switched on later: no promise of
      // consistent reads in the document.
      consistentReads: flags.eventualConsistency === undefined,
      ...(apiKey === undefined ? {} : { apiKey }),
      ...(flags.state === undefined ? {} : { stateFile: flags.state }),
      ...(flags.requestLog === undefined ? {} : { requestLog: flags.requestLog }),
      ...(flags.log ? { onAudit: (entry: AuditEntry) => print(logLine(entry, flags.json)) } : {}),
    });
  } catch (error) {
    // Not a usage error (a busy port, a damaged state file): no help text, just the reason.
    process.stderr.write(`error: cannot start the sandbox: ${(error as Error).message}\n`);
    process.exitCode = 1;
    return;
  }
  print(flags.json ? JSON.stringify({ url: running.url }) : `sandbox listening on ${running.url}`);

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
}

/** `tend sandbox actor <name>`, run: one change by a scripted actor. */
export async function actorHandler(
  name: ScriptedActor,
  local: ActorFlags,
  command: Command,
): Promise<void> {
  const fail = (message: string): never =>
    command.error(`error: ${message}`, { exitCode: 1, code: 'tend.sandbox.actor' });
  const flags = actorFlags(local, command, fail);
  const run = actorRun(name, flags, fail);
  let apiKey: string | undefined;
  if (flags.apiKeyFromEnv !== undefined) {
    apiKey = process.env[flags.apiKeyFromEnv];
    if (!apiKey) {
      fail(`--api-key-from-env: environment variable ${flags.apiKeyFromEnv} is not set or empty`);
    }
  }
  const url = flags.url.replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]/.test(url)) fail(`--url must be an http(s) URL, got "${flags.url}"`);
  const client = sandboxClient(url, apiKey === undefined ? {} : { 'X-API-Key': apiKey });
  let result: ActorResult;
  try {
    result = await run(client, flags.service);
  } catch (error) {
    if (error instanceof ActorError && error.option !== undefined && error.option !== 'service') {
      return fail(withFlag(error));
    }
    const message =
      error instanceof ActorError
        ? error.message
        : error instanceof TypeError && error.message === 'fetch failed'
          ? `cannot reach the sandbox at ${url} (is \`tend sandbox\` running there?): ${causeOf(error)}`
          : `${url} did not answer like a sandbox: ${causeOf(error)}`;
    process.stderr.write(`error: ${message}\n`);
    process.exitCode = 1;
    return;
  }
  const print = (line: string) => process.stdout.write(`${line}\n`);
  if (flags.json) print(JSON.stringify(result));
  else for (const line of describeResult(name, result)) print(line);
  process.exitCode = 0;
}
