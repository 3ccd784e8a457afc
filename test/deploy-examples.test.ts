import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ROOT } from './support/cli.js';

// examples/deploy (docs/fleet.md, "Deployment"): the systemd unit and the Kubernetes manifest of a
// fleet of workers parse and keep what the guide says they have, so that they do not rot.

const DIR = join(ROOT, 'examples', 'deploy');

/** A systemd unit's sections and keys (a key given twice keeps every value). */
function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | undefined;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) return;
    const section = /^\[([A-Za-z]+)\]$/.exec(line);
    if (section) {
      current = new Map();
      sections.set(section[1]!, current);
      return;
    }
    const kv = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (!kv || !current) throw new Error(`line ${i + 1} is not a key=value in a section: ${raw}`);
    current.set(kv[1]!, [...(current.get(kv[1]!) ?? []), kv[2]!]);
  });
  return sections;
}

const seconds = (v: string) => Number(/^(\d+)s?$/.exec(v)?.[1] ?? NaN);

describe('examples/deploy', () => {
  it('tend-worker.service: a unit with its environment file, SIGTERM and a long stop timeout', () => {
    const unit = parseUnit(readFileSync(join(DIR, 'tend-worker.service'), 'utf8'));
    expect([...unit.keys()]).toEqual(['Unit', 'Service', 'Install']);
    const service = unit.get('Service')!;
    const one = (key: string) => {
      expect(service.get(key), key).toHaveLength(1);
      return service.get(key)![0]!;
    };
    expect(one('EnvironmentFile')).toBe('/etc/tend/worker.env');
    expect(one('KillSignal')).toBe('SIGTERM');
    expect(seconds(one('TimeoutStopSec'))).toBeGreaterThanOrEqual(60);
    const exec = one('ExecStart');
    expect(exec).toMatch(/^\/usr\/bin\/tend worker /);
    expect(exec).toContain('--listen 127.0.0.1:9464');
    // No secret on the command line.
    expect(exec).not.toMatch(/postgres:\/\/|PGPASSWORD|TEND_LEDGER_KEY/);
    expect(unit.get('Install')!.get('WantedBy')).toEqual(['multi-user.target']);
    const env = readFileSync(join(DIR, 'worker.env.example'), 'utf8');
    for (const key of ['TEND_STORE_URL', 'PGPASSWORD', 'TEND_LEDGER_KEY']) {
      expect(env).toMatch(new RegExp(`^${key}=`, 'm'));
    }
    expect(env).not.toMatch(/postgres:\/\/[^@\s]*:[^@\s]*@/); // no password in the URL
  });

  it('tend-worker.yaml: a secret and a Deployment of 3 with probes on the worker endpoint', () => {
    const docs = parseAllDocuments(readFileSync(join(DIR, 'tend-worker.yaml'), 'utf8'));
    for (const d of docs) expect(d.errors).toEqual([]);
    const [secret, deployment] = docs.map((d) => d.toJS() as Record<string, any>); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(secret).toMatchObject({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'tend-worker' },
    });
    expect(Object.keys(secret!['stringData'] as object).sort()).toEqual([
      'PGPASSWORD',
      'TEND_LEDGER_KEY',
      'TEND_STORE_URL',
    ]);
    expect(deployment).toMatchObject({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      spec: { replicas: 3 },
    });
    const pod = deployment!['spec']['template']['spec'];
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(60);
    const [worker] = pod.containers as Record<string, any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
    const args = worker!['args'] as string[];
    expect(args[0]).toBe('worker');
    expect(args[args.indexOf('--listen') + 1]).toBe('0.0.0.0:9464');
    expect(worker!['envFrom']).toEqual([{ secretRef: { name: 'tend-worker' } }]);
    expect(worker!['ports']).toEqual([{ name: 'http', containerPort: 9464 }]);
    expect(worker!['livenessProbe'].httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(worker!['readinessProbe'].httpGet).toEqual({ path: '/readyz', port: 'http' });
    // The selector picks the template's pods.
    expect(deployment!['spec']['selector']['matchLabels']).toEqual(
      deployment!['spec']['template']['metadata']['labels'],
    );
  });
});
