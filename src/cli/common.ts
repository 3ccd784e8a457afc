// What commands share when they run: the process's context and redacted output, diagnostics and
// errors, signals. Loaded by a command's handler (src/cli/handlers), never to register commands.
import { resolve } from 'node:path';
import type { Diagnostic } from '../core/index.js';
import { formatDiagnostic, sortDiagnostics, toTendError } from '../core/index.js';
import type { AppContext, CrashHook, WorkspaceSelection } from '../app/index.js';
import { crashHookFrom, defaultContext, IntentError, storeFlag } from '../app/index.js';
import { EXIT } from './exit-codes.js';
import type { CommonOptions } from './flags.js';
import type { Style } from './render/style.js';
import { styleFor } from './render/style.js';

let context: AppContext | undefined;

/**
 * The context of this process: one per `tend` invocation, so that the secrets a command resolves are
 * registered with the same redactor its output passes through. Every command uses this one.
 */
export function cliContext(): AppContext {
  return (context ??= defaultContext());
}

/** Output helpers bound to the process streams; everything written passes through the redactor. */
export interface Output {
  readonly json: boolean;
  readonly style: Style;
  line(text: string): void;
  err(text: string): void;
  data(value: unknown): void;
  /** One JSON value on one line of stdout (NDJSON), redacted value by value. */
  record(value: unknown): void;
  /** One JSON value on one line of stderr (progress of a `--json` command), redacted value by value. */
  recordErr(value: unknown): void;
}

/**
 * Builds the output for a command. Every line, to stdout or stderr, text or JSON, passes through the
 * process's redactor (`cliContext().redactor`) as it is written — JSON value by value
 * (`Redactor.json`), so a secret that spans JSON punctuation cannot break the document — so a secret registered at any time
 * before — a credential, a secret reference read to send, a secret field a platform returned — never
 * reaches the terminal, a log file or a pipe.
 */
export function output(json: boolean | undefined): Output {
  const redactor = cliContext().redactor;
  return {
    json: Boolean(json),
    style: styleFor(process.stdout),
    line: (t) => process.stdout.write(`${redactor.text(t)}\n`),
    err: (t) => process.stderr.write(`${redactor.text(t)}\n`),
    data: (v) => process.stdout.write(`${redactor.json(v, 2)}\n`),
    record: (v) => process.stdout.write(`${redactor.json(v)}\n`),
    recordErr: (v) => process.stderr.write(`${redactor.json(v)}\n`),
  };
}

/** The workspace options from command options. */
export function workspaceOptions(dir: string, o: CommonOptions): WorkspaceSelection {
  return {
    dir: resolve(dir),
    ...(o.store ? { store: storeFlag(o.store) } : {}),
    ...(o.workspace ? { workspace: o.workspace } : {}),
  };
}

/** Prints diagnostics (text or JSON). */
export function printDiagnostics(out: Output, diagnostics: readonly Diagnostic[]): void {
  const sorted = sortDiagnostics(diagnostics);
  if (out.json) {
    out.data({ ok: !sorted.some((d) => d.severity === 'error'), diagnostics: sorted });
    return;
  }
  for (const d of sorted)
    out.err(
      d.severity === 'error'
        ? out.style.red(formatDiagnostic(d))
        : out.style.yellow(formatDiagnostic(d)),
    );
  const n = sorted.filter((d) => d.severity === 'error').length;
  if (n > 0)
    out.err(out.style.red(`${n} error${n === 1 ? '' : 's'}; nothing was sent to any API.`));
}

/** Reports any error thrown by a command and sets the exit code. */
export function fail(out: Output, e: unknown): void {
  if (e instanceof IntentError) {
    printDiagnostics(out, e.diagnostics);
    process.exitCode = EXIT.error;
    return;
  }
  const err = toTendError(e);
  if (out.json) out.data({ ok: false, error: err.toJSON() });
  else {
    out.err(out.style.red(`error${err.address ? ` ${err.address}` : ''}: ${err.message}`));
    if (err.hint) out.err(`  hint: ${err.hint}`);
    if (err.code === 'internal' && err.stack && process.env['TEND_DEBUG']) out.err(err.stack);
  }
  process.exitCode = EXIT.error;
}

/**
 * The torture suite's hook: TEND_CRASH_AT=<before|after>:<point>:<action>[@n] makes the process kill
 * itself (SIGKILL, like a power cut) at that store write. Unset in normal use.
 */
export function crashHookFromEnv(): CrashHook {
  return crashHookFrom(
    process.env['TEND_CRASH_AT'],
    () => process.kill(process.pid, 'SIGKILL') as never,
  );
}

/** The first stop signal aborts `signal`; a second exits at once. `dispose` removes the handlers. */
export interface StopSignals {
  readonly signal: AbortSignal;
  interrupted(): boolean;
  dispose(): void;
}

/**
 * SIGINT/SIGTERM handling shared by `apply` and `run`: the first signal lets the operations in flight
 * settle (no new one starts); a second exits at once, which is safe because every mutation is
 * journaled before it is sent and the next start resolves it.
 */
export function stopOnSignals(out: Output): StopSignals {
  const controller = new AbortController();
  let count = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    count++;
    if (count > 1) {
      out.err(
        'second signal: exiting now (the journal resolves anything in flight on the next start)',
      );
      process.exit(EXIT.interrupted);
    }
    out.err(`${sig}: stopping after the operations in flight settle (signal again to exit now)`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    interrupted: () => count > 0,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
