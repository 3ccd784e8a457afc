import type { Address, Change, ComplianceState, ResourceStatus, TendError } from '../core/index.js';
import type { TwinEntry } from '../store/index.js';
import type { ArbitrationOutcome, ArbitrationWrite } from './arbitrate.js';
import type { FeedBatch } from './arbitration-inputs.js';
import { ANNOUNCEMENT_USED_KEY } from './arbitration-inputs.js';
import type { ComplianceStep } from './compliance.js';
import { settleCompliance } from './compliance.js';
import type { CrashPoint } from './crash-points.js';
import { Operator } from './operator.js';
import { declaredIndex } from './workspace.js';

/** The store setting holding a provider's state after the last pass: `provider-state:<name>`. */
export const PROVIDER_STATE_KEY = (provider: string) => `provider-state:${provider}`;

/** How a provider answered the last pass that tried to observe it. */
export interface ProviderState {
  readonly state: 'ok' | 'unauthorized' | 'unreachable';
  readonly message?: string;
  readonly at: string;
}

/**
 * Per store, what the passes of this process last wrote as each resource's status, as the text the
 * next status is compared with: by store, so that a workspace opened again on a changed intent keeps
 * it. The process holds the lease, so nobody else writes statuses meanwhile.
 */
const writtenStatus = new WeakMap<object, Map<Address, string>>();

/**
 * Every store write of a pass, in one place: the Operator's journaled mutations (journal → twin →
 * settle → ledger), and the writes that record what the pass observed and decided — providers'
 * states, arbitration's ledger entries, claims, twin refreshes and used announcements, the feed
 * cursors, forgetting an address, resources' statuses. Each write is made between two crash points
 * (crash-points.ts), so the torture suite can kill Tend at any of them. Deciding (arbitrate, plan)
 * writes nothing: a plan makes no recorder, and so records nothing.
 */
export class Recorder extends Operator {
  /** Runs one write between its two crash points (`action` is the phase that makes it). */
  private async step<T>(point: CrashPoint, action: string, fn: () => Promise<T>): Promise<T> {
    this.crash('before', point, action);
    const result = await fn();
    this.crash('after', point, action);
    return result;
  }

  override async forget(address: Address, op?: Parameters<Operator['forget']>[1]): Promise<void> {
    await super.forget(address, op);
    // Its status is gone: if it comes back, its status is written again, whatever it was.
    writtenStatus.get(this.store)?.delete(address);
  }

  /** Every provider answered: their state is `ok` again (written only when it was not). */
  async markObservable(): Promise<void> {
    for (const name of this.ws.providers.keys()) {
      const prev = await this.ws.store.getMeta(PROVIDER_STATE_KEY(name));
      if (prev === undefined || (JSON.parse(prev) as ProviderState).state === 'ok') continue;
      const state: ProviderState = { state: 'ok', at: this.clock.now().toISOString() };
      await this.step('provider', 'observe', () =>
        this.store.setMeta(PROVIDER_STATE_KEY(name), JSON.stringify(state)),
      );
    }
  }

  /**
   * The platform of `failed` (or of no one provider) could not be observed: its state says why, and
   * every declared resource is `error` with the reason.
   */
  async markUnobservable(error: TendError, failed: string | undefined): Promise<void> {
    const at = this.clock.now().toISOString();
    if (failed !== undefined) {
      const state: ProviderState = {
        state: error.code === 'platform.unauthorized' ? 'unauthorized' : 'unreachable',
        message: error.message,
        at,
      };
      await this.step('provider', 'observe', () =>
        this.store.setMeta(PROVIDER_STATE_KEY(failed), JSON.stringify(state)),
      );
    }
    // Every status is written here: what a pass remembers having written no longer holds.
    writtenStatus.delete(this.store);
    const previous = new Map(
      (await this.ws.store.listStatus()).map((s) => [s.address, s] as const),
    );
    for (const r of this.ws.intent.resources) {
      const health = this.ws.providers.get(r.provider)?.health?.();
      const circuit = health && health.circuit !== 'closed' ? ` (circuit ${health.circuit})` : '';
      const prev = previous.get(r.address);
      const why =
        error.code === 'platform.unauthorized' && (failed === undefined || failed === r.provider)
          ? 'unauthorized: '
          : '';
      await this.step('status', 'observe', () =>
        this.store.putStatus({
          address: r.address,
          state: 'error',
          ...(prev?.objectId ? { objectId: prev.objectId } : {}),
          message: `${why}cannot observe ${r.provider}${circuit}: ${error.message}`,
          checks: prev?.checks ?? [],
          updatedAt: at,
        }),
      );
    }
  }

  /**
   * Records what arbitration decided — its writes in order (ledger entries, claims, twin refreshes,
   * used announcements) — then stores the feed cursors, once what they brought is in the ledger.
   * Returns the ledger entries written.
   */
  async recordDecisions(arbitration: ArbitrationOutcome, feed: FeedBatch): Promise<Change[]> {
    const recorded: Change[] = [];
    for (const w of arbitration.writes) {
      const entry = await this.recordDecision(w);
      if (entry) recorded.push(entry);
    }
    for (const [name, cursor] of feed.cursors) {
      await this.step('cursor', 'arbitrate', () => this.store.setCursor(name, cursor));
    }
    return recorded;
  }

  private async recordDecision(w: ArbitrationWrite): Promise<Change | undefined> {
    switch (w.kind) {
      case 'ledger':
        return this.step('ledger', 'arbitrate', () =>
          this.store.appendChange(
            this.ws.origin ? { ...w.entry, origin: this.ws.origin } : w.entry,
          ),
        );
      case 'gone':
        await this.step('twin', 'arbitrate', () => this.store.deleteTwin(w.address));
        for (const field of w.claims) {
          await this.step('claim', 'arbitrate', () => this.store.deleteClaim(w.address, field));
        }
        return undefined;
      case 'claim':
        await this.step('claim', 'arbitrate', () => this.store.putClaim(w.claim));
        return undefined;
      case 'release':
        await this.step('claim', 'arbitrate', () => this.store.deleteClaim(w.address, w.field));
        return undefined;
      case 'announcement-used':
        await this.step('announcement', 'arbitrate', () =>
          this.store.setMeta(ANNOUNCEMENT_USED_KEY(w.id), w.at),
        );
        return undefined;
      case 'twin':
        await this.step('twin', 'arbitrate', () => this.store.putTwin(w.entry));
        return undefined;
    }
  }

  /**
   * Records what evaluating the policies on the observed objects found: a `verdict` ledger entry for
   * each violation found (with the change that introduced it) or gone, in order, between the
   * `ledger` crash points of the `compliance` phase. Returns each evaluated resource's state, its
   * violations pointing at the entries that recorded them (the state goes into its status).
   */
  async recordCompliance(step: ComplianceStep): Promise<Map<Address, ComplianceState>> {
    const appended: Change[] = [];
    for (const { entry } of step.entries) {
      appended.push(
        await this.step('ledger', 'compliance', () =>
          this.store.appendChange(this.ws.origin ? { ...entry, origin: this.ws.origin } : entry),
        ),
      );
    }
    return settleCompliance(this.ws, step, appended);
  }

  /**
   * Writes the statuses of a pass's resources that changed since this process last wrote them (a
   * pass of a converged workspace writes nothing: a status's `updatedAt` is when the resource came to
   * be in that state). Written all at once, so the store commits them together (one disk sync, not
   * one per resource). No crash points: they are the pass's last writes, so a kill just before them
   * is a kill after the last operation's ledger entry, and one just after them a kill after the pass.
   */
  async recordStatuses(statuses: readonly ResourceStatus[]): Promise<void> {
    const last = writtenStatus.get(this.store) ?? new Map<Address, string>();
    const writes: ResourceStatus[] = [];
    const written: [Address, string][] = [];
    for (const s of statuses) {
      const c = s.compliance;
      const same = JSON.stringify([
        s.state,
        s.objectId,
        s.message,
        s.checks,
        // What a compliance state is told apart by, without writing it all out every pass.
        c && [
          c.key,
          c.evaluatedAt,
          c.findings.map((f) => f.recorded ?? null),
          c.checks?.map((f) => [f.policy, f.recorded ?? null]) ?? null,
        ],
      ]);
      if (last.get(s.address) === same) continue;
      written.push([s.address, same]);
      writes.push(s);
    }
    await Promise.all(writes.map((s) => this.store.putStatus(s)));
    for (const [address, same] of written) last.set(address, same);
    // An address no longer declared may have its status deleted (a move, a delete) and come back
    // later: it must then be written again, whatever it was.
    const declared = declaredIndex(this.ws.intent);
    for (const address of last.keys()) if (!declared.has(address)) last.delete(address);
    writtenStatus.set(this.store, last);
  }

  /** Remembers an object Tend adopted without an operation (`tend import`): its twin entry as given. */
  async recordImported(entry: TwinEntry): Promise<void> {
    await this.step('twin', 'import', () => this.store.putTwin(entry));
  }
}
