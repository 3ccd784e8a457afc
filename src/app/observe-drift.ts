import type { ArbitrationOutcome, FeedBatch, Observation, Workspace } from '../engine/index.js';
import {
  arbitrate,
  observationAfter,
  observe,
  readArbitrationMemory,
  readFeedsOrNothing,
  tendActor,
} from '../engine/index.js';

/** What the platform shows now and what the policy would decide about it; nothing written. */
export interface ReadOnlyDecisions {
  readonly observation: Observation;
  readonly feed: FeedBatch;
  readonly arbitration: ArbitrationOutcome;
  /** What could not be read (an audit feed), in one sentence each. */
  readonly warnings: readonly string[];
}

/** What is live now, read-only (as `plan` observes: no journal recovery). */
export function observeNow(ws: Workspace, now: Date): Promise<Observation> {
  return observe(ws, { now });
}

/**
 * Runs the arbitrate step on an observation without recording (DESIGN.md §4): who changed each
 * drifted field (the feeds are read from their stored cursors, which are not advanced) and what the
 * policy decides now. Nothing is written: no ledger entry, no claim, no cursor. A feed that cannot
 * be read is a warning: changes are then attributed from what Tend last saw.
 */
export async function decideReadOnly(
  ws: Workspace,
  observation: Observation,
  now: Date,
): Promise<ReadOnlyDecisions> {
  const warnings: string[] = [];
  const feed = await readFeedsOrNothing(ws, tendActor().actor, (w) => warnings.push(w));
  const memory = await readArbitrationMemory(ws, now);
  const arbitration = arbitrate(ws, observation, { now, feed, memory });
  return { observation: observationAfter(observation, arbitration), feed, arbitration, warnings };
}

/** Observes the platform and decides read-only (`observeNow`, then `decideReadOnly`); no lease. */
export async function observeAndDecide(ws: Workspace, now: Date): Promise<ReadOnlyDecisions> {
  return decideReadOnly(ws, await observeNow(ws, now), now);
}
