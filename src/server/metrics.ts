import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ApiCall } from '../app/index.js';
import type { PolicySeverity } from '../core/index.js';
import type { HubEvent } from './event-hub.js';

/**
 * The Prometheus series of one `tend serve` (a registry of its own, never prom-client's global one):
 * fed by the application events (passes, observed changes and their decisions), the loop's journal
 * backlog, every HTTP call a provider makes, and the API's own requests.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly #passSeconds = new Histogram({
    name: 'tend_pass_duration_seconds',
    help: 'How long a pass of the loop took (observe to verify).',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly #decisionLatency = new Histogram({
    name: 'tend_event_to_decision_seconds',
    help: 'From a change on the platform (its audit-feed time) to the decision Tend recorded about it.',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });
  readonly #drift = new Counter({
    name: 'tend_drift_total',
    help: 'Drifted declared fields observed, by the kind of actor that changed them.',
    labelNames: ['actor_kind'],
    registers: [this.registry],
  });
  readonly #decisions = new Counter({
    name: 'tend_decisions_total',
    help: 'Arbitration decisions recorded, by decision and the kind of actor whose change was decided.',
    labelNames: ['decision', 'actor_kind'],
    registers: [this.registry],
  });
  readonly #backlog = new Gauge({
    name: 'tend_journal_backlog',
    help: 'Journal operations not yet settled (after the last pass).',
    registers: [this.registry],
  });
  readonly #resources = new Gauge({
    name: 'tend_resources',
    help: 'Declared resources by state after the last full pass.',
    labelNames: ['state'],
    registers: [this.registry],
  });
  readonly #apiCalls = new Counter({
    name: 'tend_api_calls_total',
    help: 'HTTP calls to platforms, by provider, method and status (or error kind when no response came).',
    labelNames: ['provider', 'method', 'status'],
    registers: [this.registry],
  });
  readonly #apiErrors = new Counter({
    name: 'tend_api_errors_total',
    help: 'HTTP calls to platforms that failed (4xx, 5xx, timeouts, lost connections), by provider and status.',
    labelNames: ['provider', 'status'],
    registers: [this.registry],
  });
  readonly #violations = new Gauge({
    name: 'tend_policy_violations',
    help: 'Open policy violations on what the platform holds, by policy and severity (as the last pass found them).',
    labelNames: ['policy', 'severity'],
    registers: [this.registry],
  });
  readonly #requests = new Counter({
    name: 'tend_http_requests_total',
    help: "Requests to tend serve's own API, by route and status.",
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });

  /** Whether the pass under way is a focused one (its `observed` event says so). */
  #focused = false;

  constructor() {
    this.#backlog.set(0);
  }

  /** Counts what an application event says. */
  readonly event = (e: HubEvent): void => {
    const ev = e.event;
    if (ev.kind === 'observed') this.#focused = ev.focused === true;
    else if (ev.kind === 'pass-done') {
      this.#passSeconds.observe(ev.ms / 1000);
      // A focused pass counts only the resources the audit feed named: the gauge keeps the last
      // full pass's counts.
      if (!this.#focused) {
        for (const [state, n] of Object.entries(ev.states)) this.#resources.set({ state }, n);
      }
    } else if (ev.kind === 'change-observed') {
      const d = ev.change.decision;
      if (!d) return;
      const actorKind = ev.change.actorKind ?? 'unknown';
      this.#drift.inc({ actor_kind: actorKind }, Math.max(1, ev.change.fields.length));
      this.#decisions.inc({ decision: d.decision, actor_kind: actorKind });
      const at = Date.parse(ev.change.time);
      const now = Date.parse(e.time);
      if (!Number.isNaN(at) && now >= at) this.#decisionLatency.observe((now - at) / 1000);
    }
  };

  /** Counts one HTTP attempt of a provider. */
  readonly apiCall = (call: ApiCall): void => {
    const status = call.status !== undefined ? String(call.status) : (call.error ?? 'error');
    this.#apiCalls.inc({ provider: call.provider, method: call.method, status });
    if (call.status === undefined || call.status >= 400) {
      this.#apiErrors.inc({ provider: call.provider, status });
    }
  };

  /** The journal's unsettled operations after a pass. */
  backlog(n: number): void {
    this.#backlog.set(n);
  }

  /**
   * The open policy violations, per policy and severity (core `violationCounts`): replaces what
   * was set before, so a policy no longer in the intent leaves the series.
   */
  policyViolations(
    counts: readonly {
      readonly policy: string;
      readonly severity: PolicySeverity;
      readonly count: number;
    }[],
  ): void {
    this.#violations.reset();
    for (const c of counts)
      this.#violations.set({ policy: c.policy, severity: c.severity }, c.count);
  }

  /** Counts one request to the API. */
  request(method: string, route: string, status: number): void {
    this.#requests.inc({ method, route, status: String(status) });
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
