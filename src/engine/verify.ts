import type { Address, CheckResult, ObservedObject, ResourceDecl } from '../core/index.js';
import { getPath, resolveReferences, TendError, toTendError } from '../core/index.js';
import { diffResource } from './planner.js';
import { runCheck } from '../checks/index.js';
import type { Clock } from './clock.js';
import type { Workspace } from './workspace.js';

/**
 * Re-reads an object until its declared fields match (bounded, for eventually consistent APIs).
 * A 200 OK is not success: this is. Throws `verify.timeout` naming the fields still different.
 */
export async function waitConverged(
  ws: Workspace,
  decl: ResourceDecl,
  objectId: string,
  desired: Readonly<Record<string, unknown>>,
  clock: Clock,
  timeoutMs: number,
): Promise<ObservedObject> {
  const { provider, info } = ws.typeOf(decl.type);
  const deadline = clock.now().getTime() + timeoutMs;
  let delay = 50;
  let last: ObservedObject | undefined;
  let differing: string[] = ['(not visible yet)'];
  for (;;) {
    last = await provider.read(info.name, objectId).catch((e: unknown) => {
      if (toTendError(e).retryable) return undefined;
      throw e;
    });
    if (last) {
      // The same comparison the plan makes: verified means "no drift".
      differing = diffResource(ws, decl, desired, last).map((c) => c.path);
      if (differing.length === 0) return last;
    }
    if (clock.now().getTime() >= deadline) {
      throw new TendError(
        'verify.timeout',
        `${decl.address} did not converge within ${timeoutMs} ms: ${differing.join(', ')} still differ${differing.length === 1 ? 's' : ''}`,
        { address: decl.address, phase: 'verify', retryable: true },
      );
    }
    await clock.sleep(delay);
    delay = Math.min(delay * 2, 1000);
  }
}

/** Runs a resource's checks against the object as observed now. */
export async function runChecks(
  ws: Workspace,
  decl: ResourceDecl,
  observed: ObservedObject,
  desired: Readonly<Record<string, unknown>>,
  known: (address: Address) => ObservedObject | undefined,
  clock: Clock,
): Promise<CheckResult[]> {
  const resolve = (text: string): string | undefined => {
    const v = resolveReferences(text, (target, path) => {
      const o = target === decl.address ? observed : known(target);
      if (!o) return undefined;
      const v = getPath(o.fields, path);
      return v === undefined ? undefined : { value: v };
    });
    return typeof v === 'string' ? v : undefined;
  };
  const results: CheckResult[] = [];
  for (const check of decl.checks) {
    results.push(
      await runCheck(check, {
        observed: observed.fields,
        desired: desired,
        resolve,
        now: () => clock.now(),
        ...(ws.sql ? { sql: ws.sql } : {}),
        ...(ws.userAgent !== undefined ? { userAgent: ws.userAgent } : {}),
      }),
    );
  }
  return results;
}
