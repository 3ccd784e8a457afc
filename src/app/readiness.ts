import { toTendError } from '../core/index.js';
import type { HeldWorkspace } from './held-workspace.js';

// Readiness (`GET /readyz` of `tend serve` and of `tend worker --listen`; docs/api.md, docs/fleet.md,
// decision 0046): whether this process can do its work now, and why not.

/** A readiness answer: ready, or why not. */
export interface Readiness {
  readonly ready: boolean;
  readonly reason?: string;
}

/** How long a readiness check waits for the store to answer. */
export const READINESS_TIMEOUT_MS = 2_000;

/** Undefined when `check` resolves within `timeoutMs`, else why not. */
export async function answers(
  check: () => Promise<unknown>,
  timeoutMs: number,
): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    return await Promise.race([
      check().then(
        () => undefined,
        (e: unknown) => toTendError(e).message,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `tend serve`'s readiness: its store answers (one read of the workspace's lease row, at most
 * `timeoutMs`). The workspace it holds for reads is used, so an intent that does not load is a reason
 * too.
 */
export async function storeReadiness(
  held: HeldWorkspace,
  timeoutMs = READINESS_TIMEOUT_MS,
): Promise<Readiness> {
  const problem = await answers(
    () => held.read((opened) => opened.ws.store.getLease(opened.ws.name)),
    timeoutMs,
  );
  return problem === undefined
    ? { ready: true }
    : { ready: false, reason: `the store: ${problem}` };
}

/** `tend serve --fleet`'s readiness: the fleet's store answers (its status read, at most `timeoutMs`). */
export async function fleetReadiness(
  fleet: { status(): Promise<unknown> },
  timeoutMs = READINESS_TIMEOUT_MS,
): Promise<Readiness> {
  const problem = await answers(() => fleet.status(), timeoutMs);
  return problem === undefined
    ? { ready: true }
    : { ready: false, reason: `the fleet's store: ${problem}` };
}
