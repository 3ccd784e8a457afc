import { describe, expect, it } from 'vitest';
import type { WorkerEvent } from '../app/index.js';
import { WorkerHealth } from '../app/index.js';
import { steppedClock } from '../engine/index.js';
import { FleetMetrics } from './fleet-metrics.js';
import { workerApp } from './worker-app.js';

// `tend worker --listen`'s endpoint in-process: readiness from the worker's health (a stepped clock
// instead of waiting), and the tend_fleet_* series counted from the worker's events and probe. The
// real thing (a worker process, PostgreSQL stopped and started, promtool) is test/e2e/fleet-ops.test.ts.

const TTL = 3_000;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

function endpoint(health: WorkerHealth, metrics = new FleetMetrics()) {
  return workerApp({
    worker: 'w1',
    version: '1.2.3',
    readiness: () => health.readiness(500),
    metrics: () => metrics.render(),
  });
}

async function readyz(health: WorkerHealth): Promise<{ status: number; body: unknown }> {
  const r = await endpoint(health).request('/readyz');
  return { status: r.status, body: await r.json() };
}

describe('the worker endpoint', () => {
  it('answers /healthz with the worker and its version', async () => {
    const r = await endpoint(new WorkerHealth(steppedClock())).request('/healthz');
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ ok: true, worker: 'w1', version: '1.2.3' });
  });

  it('is ready only with a registry that answers and a heartbeat within the TTL', async () => {
    const clock = steppedClock();
    const health = new WorkerHealth(clock);
    expect(await readyz(health)).toEqual({
      status: 503,
      body: { ready: false, worker: 'w1', reason: 'starting: the fleet registry is not open yet' },
    });
    let answering = true;
    health.attached(
      () => (answering ? Promise.resolve() : Promise.reject(new Error('connect ECONNREFUSED'))),
      TTL,
    );
    expect(await readyz(health)).toMatchObject({
      status: 503,
      body: { reason: 'no heartbeat recorded yet' },
    });
    health.heartbeat(true);
    expect(await readyz(health)).toEqual({ status: 200, body: { ready: true, worker: 'w1' } });
    // The registry stops answering: not ready at once.
    answering = false;
    expect(await readyz(health)).toMatchObject({
      status: 503,
      body: { reason: 'the fleet registry: connect ECONNREFUSED' },
    });
    answering = true;
    // Heartbeats failing for longer than the TTL: not ready, with the last failure.
    health.heartbeat(false, 'the database system is shutting down');
    await clock.sleep(TTL);
    expect(await readyz(health)).toEqual({ status: 200, body: { ready: true, worker: 'w1' } });
    await clock.sleep(1);
    expect(await readyz(health)).toMatchObject({
      status: 503,
      body: {
        reason:
          'the last heartbeat succeeded 3 s ago; the lease TTL is 3 s (last failure: the database system is shutting down)',
      },
    });
    health.heartbeat(true);
    expect((await readyz(health)).status).toBe(200);
  });

  it('is not ready when the registry does not answer within the timeout', async () => {
    const health = new WorkerHealth(steppedClock());
    health.attached(() => new Promise<void>(() => undefined), TTL);
    health.heartbeat(true);
    expect(await readyz(health)).toMatchObject({
      status: 503,
      body: { reason: 'the fleet registry: no answer within 500 ms' },
    });
  });

  it('answers an unknown path with 404 and what it serves', async () => {
    const r = await endpoint(new WorkerHealth(steppedClock())).request('/status');
    expect(r.status).toBe(404);
    expect(await r.json()).toMatchObject({ error: { code: 'route.not_found' } });
  });
});

describe('tend_fleet_* metrics', () => {
  const event = (e: DistributiveOmit<WorkerEvent, 'worker'>) =>
    ({ worker: 'w1', ...e }) as WorkerEvent;

  it('counts takeovers, releases by reason, losses, passes and failures; gauges the counts', async () => {
    const m = new FleetMetrics();
    m.event(event({ kind: 'took', workspace: 'a', epoch: 1 }));
    m.event(
      event({
        kind: 'took',
        workspace: 'b',
        epoch: 4,
        tookOver: { command: 'tend worker', pid: 9, host: 'h' },
      }),
    );
    m.event(event({ kind: 'released', workspace: 'a', reason: 'rebalance' }));
    m.event(event({ kind: 'lost', workspace: 'b', reason: 'taken over' }));
    m.event(event({ kind: 'pass', workspace: 'a', pass: 1, ms: 5, states: {} }));
    m.event(event({ kind: 'pass', workspace: 'a', pass: 2, ms: 5, states: {} }));
    m.event(event({ kind: 'failed', workspace: 'b', code: 'x', message: 'y' }));
    m.heartbeat(true);
    m.heartbeat(false);
    m.counted({ registered: 6, held: 2 });
    m.leaseRenewed(0.004);
    const text = (await m.render()).text;
    expect(text).toContain('tend_fleet_takeovers_total 1\n');
    expect(text).toContain('tend_fleet_releases_total{reason="rebalance"} 1\n');
    expect(text).toContain('tend_fleet_releases_total{reason="stopping"} 0\n');
    expect(text).toContain('tend_fleet_leases_lost_total 1\n');
    expect(text).toContain('tend_fleet_passes_total{workspace="a"} 2\n');
    expect(text).toContain('tend_fleet_pass_failures_total{workspace="b"} 1\n');
    expect(text).toContain('tend_fleet_heartbeat_failures_total 1\n');
    expect(text).toContain('tend_fleet_workspaces_registered 6\n');
    expect(text).toContain('tend_fleet_leases_held 2\n');
    expect(text).toContain('tend_fleet_lease_renew_duration_seconds_bucket{le="0.005"} 1\n');
    expect(text).toContain('tend_fleet_lease_renew_duration_seconds_count 1\n');
    // No job table yet: no queue depth series rather than a made-up 0.
    expect(text).not.toContain('tend_fleet_job_queue_depth');
  });

  it('exports the job queue depth once a source is handed in', async () => {
    const m = new FleetMetrics({ jobQueueDepth: () => Promise.resolve(7) });
    expect((await m.render()).text).toContain('tend_fleet_job_queue_depth 7\n');
  });

  it('exports the job queue depth from the table the worker attaches, read at each scrape', async () => {
    const m = new FleetMetrics();
    let queued = 3;
    m.jobsAttached(() => Promise.resolve(queued));
    expect((await m.render()).text).toContain('tend_fleet_job_queue_depth 3\n');
    queued = 0;
    m.jobsAttached(() => Promise.resolve(queued));
    expect((await m.render()).text).toContain('tend_fleet_job_queue_depth 0\n');
  });
});
