// A restarted Tend for the recovery benchmark: opens the workspace and runs one apply pass, which
// resolves every pending operation of the journal before planning. Runs in its own process so that
// a budget can end it (process.exit) even while recovery is still working. Prints one JSON line (a
// RecoveryChildResult) on stdout.
import { openWorkspaceAt } from '../app/index.js';
import { setKey } from '../core/index.js';
import { reconcilePass, systemClock, tendActor } from '../engine/index.js';
import { passProbe } from './pass-probe.js';

/** What the restarted process saw, in milliseconds since it began opening the workspace. */
export interface RecoveryChildResult {
  readonly pending: number;
  /** Intent loaded, provider connected, store opened. */
  readonly openMs: number;
  /** The first observation of the pass is done (recovery starts). */
  readonly observedMs: number;
  /** Operations resolved (a `recovered` event each) before the end or the budget. */
  readonly resolved: number;
  /** When the last of them was resolved. */
  readonly lastResolvedMs: number | undefined;
  /** When the plan was ready: recovery is over and new work can start. */
  readonly planMs: number | undefined;
  /** The whole first pass, when it finished within the budget. */
  readonly passMs: number | undefined;
  /** Pending operations left in the journal at the end (when the pass finished). */
  readonly leftPending: number | undefined;
  readonly budgetHit: boolean;
  readonly outcomes: Readonly<Record<string, number>>;
}

async function main(): Promise<void> {
  const dir = process.argv[2]!;
  const budgetMs = Number(process.argv[3] ?? 60_000);
  const t0 = performance.now();
  const since = () => performance.now() - t0;
  let observedMs = 0;
  let planMs: number | undefined;
  let resolved = 0;
  let lastResolvedMs: number | undefined;
  const outcomes: Record<string, number> = {};
  const ws = await openWorkspaceAt({ dir, name: 'bench', env: {} });
  const openMs = since();
  const pending = (await ws.store.unsettled()).length;
  const finish = (result: Partial<RecoveryChildResult>) => {
    const out: RecoveryChildResult = {
      pending,
      openMs,
      observedMs,
      resolved,
      lastResolvedMs,
      planMs,
      passMs: undefined,
      leftPending: undefined,
      budgetHit: false,
      outcomes,
      ...result,
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  };
  const budget = setTimeout(() => {
    finish({ budgetHit: true });
    process.exit(0);
  }, budgetMs);
  const probe = passProbe((e) => {
    if (e.kind === 'observed' && observedMs === 0) observedMs = since();
    else if (e.kind === 'recovered') {
      resolved++;
      lastResolvedMs = since();
      // "adopted i-1234 (…)" and "adopted i-5678 (…)" are one kind of outcome.
      const kind = e.outcome.split(/[ :]/)[0] ?? e.outcome;
      setKey(outcomes, kind, (outcomes[kind] ?? 0) + 1);
    } else if (e.kind === 'plan') planMs = since();
  });
  await reconcilePass(ws, {
    mode: 'apply',
    approveDestroy: false,
    prune: false,
    actor: tendActor('bench'),
    clock: systemClock,
    report: probe.report,
    verifyTimeoutMs: 60_000,
    runChecks: false,
  });
  const passMs = since();
  clearTimeout(budget);
  const leftPending = (await ws.store.unsettled()).length;
  await ws.close();
  finish({ passMs, leftPending });
}

void main();
