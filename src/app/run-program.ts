import { execFile } from 'node:child_process';

// Running git (and tar) for git workspaces and `accept --git` (decision 0044): no shell, the
// arguments passed as they are, never a prompt for credentials, a time limit, a bounded output.

/** A program that failed: its stderr (trimmed; its error's message when empty), and whether it was killed for taking too long. */
export class ProgramFailure extends Error {
  constructor(
    readonly stderr: string,
    readonly timedOut: boolean,
  ) {
    super(stderr);
  }
}

/** What `runProgram` is given besides the program and its arguments. */
export interface RunProgramOptions {
  readonly cwd?: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Killed (SIGKILL) after this long; no limit when absent. */
  readonly timeoutMs?: number;
}

/**
 * Runs a program without a shell and returns its trimmed stdout; rejects with a `ProgramFailure`.
 * `GIT_TERMINAL_PROMPT=0` is always set: a git that needs credentials fails instead of waiting.
 */
export function runProgram(
  file: string,
  args: readonly string[],
  options: RunProgramOptions,
): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      file,
      [...args],
      {
        ...(options.cwd ? { cwd: options.cwd } : {}),
        env: { ...options.env, GIT_TERMINAL_PROMPT: '0' },
        maxBuffer: 16 * 1024 * 1024,
        ...(options.timeoutMs !== undefined
          ? { timeout: options.timeoutMs, killSignal: 'SIGKILL' as const }
          : {}),
      },
      (error, stdout, stderr) => {
        if (error) {
          const killed = (error as { killed?: boolean }).killed === true;
          reject(new ProgramFailure(String(stderr).trim() || error.message, killed));
        } else resolvePromise(String(stdout).trim());
      },
    );
  });
}
