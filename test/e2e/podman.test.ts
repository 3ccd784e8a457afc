import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExampleFiles, ROOT, runCli, type CliResult } from '../support/cli.js';
import { PODMAN, startPodman, type PodmanHandle } from '../support/podman.js';
import { filesUnder, leaks } from '../support/secret-leaks.js';

// Issue 27, Podman: networks, volumes and a secret managed through the real CLI against Podman's
// Docker-compatible service (`podman system service`), from Docker Engine's own document (API 1.41,
// unmodified) plus examples/podman/specs/podman.overlay.yaml — a platform implementing someone
// else's document. First the facts the overlay states, checked against the service itself; then the
// example applies, plans nothing, and puts back a network removed by hand; the secret's value never
// shows. The steps build on each other (one service, one intent directory), in order.

const EXAMPLE = join(ROOT, 'examples', 'podman');
const SPEC = join(EXAMPLE, 'specs', 'docker-engine-1.41.yaml');
const OVERLAY = join(EXAMPLE, 'specs', 'podman.overlay.yaml');
const EXAMPLE_ENDPOINT = 'http://127.0.0.1:2375/v1.41';
/** The secret's value, and what the intent's environment variable holds (the API takes base64). */
const SECRET = 'correct horse battery staple 7f3e';
const SECRET_B64 = Buffer.from(SECRET).toString('base64');

interface Network {
  Name: string;
  Id: string;
  Internal: boolean;
  IPAM: { Config: { Subnet: string; Gateway: string }[] };
  Labels: Record<string, string>;
}
interface Volume {
  Name: string;
  Driver: string;
  Labels: Record<string, string> | null;
}
interface Secret {
  ID: string;
  Spec: { Name: string; Labels: Record<string, string> | null };
}

// What the document and the overlay say, without a service: runs wherever the CLI is built.
describe("examples/podman's overlay on Docker Engine's document (CLI, no service)", () => {
  it('providers inspect: with the overlay, networks, volumes and secrets keyed by Name; secrets without a marker; no overlay warnings', async () => {
    const r = await runCli(['providers', 'inspect', SPEC, '--overlay', OVERLAY, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as {
      types: Record<string, unknown>[];
      warnings: string[];
    };
    // Only the document's own (it is not strict YAML; small Swagger errors patched on the way).
    expect(report.warnings.filter((w) => /overlay|x-tend/.test(w))).toEqual([]);
    const byName = new Map(report.types.map((t) => [t['name'], t]));
    expect([...byName.keys()].sort()).toEqual(['containers', 'networks', 'secrets', 'volumes']);
    expect(byName.get('networks')).toMatchObject({
      identity: 'natural-key',
      naturalKey: ['Name'],
      idField: 'Id',
      markerField: 'Labels',
      createIdField: 'Id',
    });
    expect(byName.get('volumes')).toMatchObject({
      identity: 'natural-key',
      naturalKey: ['Name'],
      idField: 'Name',
      markerField: 'Labels',
      writeOnly: ['DriverOpts'],
    });
    expect(byName.get('secrets')).toMatchObject({
      identity: 'natural-key',
      naturalKey: ['Name'],
      idField: 'Name',
      sensitive: ['Data'],
    });
    expect(byName.get('secrets')!['markerField']).toBeUndefined();
  });
});

describe.skipIf(PODMAN.skip)(
  `Podman through Docker Engine's document, end to end (CLI, real podman system service)${PODMAN.note}`,
  () => {
    let podman: PodmanHandle;
    let dir: string;
    const outputs: { what: string; text: string }[] = [];
    const env = {
      PODMAN_DB_PASSWORD_B64: SECRET_B64,
      // The test's own ledger key: no per-user key file is written for it.
      TEND_LEDGER_KEY: 'podman-e2e-ledger-key-0123456789abcdef',
    };
    async function tend(args: string[]): Promise<CliResult> {
      const r = await runCli(args, { env });
      outputs.push({ what: `tend ${args.join(' ')}`, text: r.stdout + r.stderr });
      return r;
    }
    async function list<T>(path: string): Promise<T> {
      const r = await podman.api('GET', path);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body as T;
    }
    const networks = () => list<Network[]>('/networks');
    const volumes = async () => (await list<{ Volumes: Volume[] }>('/volumes')).Volumes;
    const secrets = () => list<Secret[]>('/secrets');

    beforeAll(async () => {
      podman = await startPodman();
      dir = mkdtempSync(join(tmpdir(), 'tend-podman-intent-'));
      copyExampleFiles(EXAMPLE, dir);
      const main = join(dir, 'main.yaml');
      const text = readFileSync(main, 'utf8');
      if (!text.includes(EXAMPLE_ENDPOINT)) {
        throw new Error(`examples/podman: expected endpoint ${EXAMPLE_ENDPOINT}`);
      }
      writeFileSync(main, text.replace(EXAMPLE_ENDPOINT, podman.apiUrl));
    });
    afterAll(async () => {
      await podman?.stop();
      if (podman) expect(existsSync(podman.dir)).toBe(false);
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('the service behaves as the overlay says: names refused twice (500 for networks, 409 for secrets), volumes answered again, secret labels dropped from the list', async () => {
      // Before: only Podman's default network (`podman`, named `bridge` as Docker names its own).
      expect((await networks()).map((n) => n.Name)).toEqual(['bridge']);
      expect(await volumes()).toEqual([]);
      expect(await secrets()).toEqual([]);

      const net = { Name: 'probe-net', Labels: { owner: 'test' } };
      const first = await podman.api('POST', '/networks/create', net);
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ Id: expect.any(String) as string });
      const again = await podman.api('POST', '/networks/create', { ...net, CheckDuplicate: true });
      expect(again).toMatchObject({ status: 500, body: { cause: 'network already exists' } });

      const vol = await podman.api('POST', '/volumes/create', {
        Name: 'probe-vol',
        Labels: { a: '1' },
      });
      expect(vol.status).toBe(201);
      const volAgain = await podman.api('POST', '/volumes/create', {
        Name: 'probe-vol',
        Labels: { a: '2' },
      });
      // Not refused: the volume that exists, unchanged.
      expect(volAgain).toMatchObject({
        status: 201,
        body: { Name: 'probe-vol', Labels: { a: '1' } },
      });
      expect((await volumes()).map((v) => v.Name)).toEqual(['probe-vol']);
      // The list is wrapped in Volumes, as the document says.
      expect(await list('/volumes')).toMatchObject({ Warnings: [] });

      const sec = { Name: 'probe-secret', Data: 'eA==', Labels: { owner: 'test' } };
      const created = await podman.api('POST', '/secrets/create', sec);
      expect(created.body).toMatchObject({ ID: expect.any(String) as string });
      const secAgain = await podman.api('POST', '/secrets/create', sec);
      expect(secAgain).toMatchObject({ status: 409, body: { cause: 'secret name in use' } });
      // The item read (by name) keeps the labels, inside Spec, and never answers Data …
      const read = await podman.api('GET', '/secrets/probe-secret');
      expect(read.body).toMatchObject({
        Spec: { Name: 'probe-secret', Labels: { owner: 'test' } },
      });
      expect(JSON.stringify(read.body)).not.toContain('eA==');
      // … the list answers Labels null: no place Tend could find its marker in.
      expect((await secrets()).map((s) => s.Spec)).toMatchObject([
        { Name: 'probe-secret', Labels: null },
      ]);

      for (const path of ['/networks/probe-net', '/volumes/probe-vol', '/secrets/probe-secret']) {
        expect((await podman.api('DELETE', path)).status, path).toBe(204);
      }
      expect((await networks()).map((n) => n.Name)).toEqual(['bridge']);
      expect(await volumes()).toEqual([]);
      expect(await secrets()).toEqual([]);
    });

    it('applies from empty: two networks, a volume and a secret, the marker in the labels of the first three', async () => {
      const apply = await tend(['apply', dir]);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      expect(apply.stdout).toContain('Apply complete: 4 converged.');

      const nets = new Map((await networks()).map((n) => [n.Name, n]));
      expect(nets.get('tend-backend')).toMatchObject({
        Internal: true,
        Labels: { tier: 'backend', 'tend.address': 'podman.networks/backend' },
      });
      expect(nets.get('tend-frontend')).toMatchObject({
        IPAM: { Config: [{ Subnet: '10.89.42.0/24', Gateway: '10.89.42.1' }] },
        Labels: { 'tend.address': 'podman.networks/frontend' },
      });
      // The service keeps its network configurations in its own directory, not in /etc/cni/net.d.
      expect(existsSync(join(podman.dir, 'networks', 'tend-backend.conflist'))).toBe(true);
      expect(await volumes()).toMatchObject([
        {
          Name: 'tend-pgdata',
          Labels: { tier: 'backend', 'tend.address': 'podman.volumes/pgdata' },
        },
      ]);
      expect((await secrets()).map((s) => s.Spec.Name)).toEqual(['tend-db-password']);
    });

    it('plans nothing afterwards: the second plan is empty', async () => {
      const plan = await tend(['plan', dir]);
      expect(plan.code, plan.stdout + plan.stderr).toBe(0);
      expect(plan.stdout).toContain('No changes. 4 resources match the intent.');
    });

    it('a network removed by hand is created again by the next apply, and the plan is empty after', async () => {
      expect((await podman.api('DELETE', '/networks/tend-backend')).status).toBe(204);
      expect((await networks()).map((n) => n.Name)).not.toContain('tend-backend');

      const plan = await tend(['plan', dir]);
      expect(plan.code).toBe(2);
      expect(plan.stdout).toContain('+ podman.networks/backend  will be created');
      expect(plan.stdout).toContain(
        'Plan: 1 to create, 0 to update, 0 to replace, 0 to delete, 3 unchanged.',
      );

      const apply = await tend(['apply', dir]);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      expect(apply.stdout).toContain('podman.networks/backend  deleted by unknown');
      expect(apply.stdout).toContain('Apply complete: 4 converged.');
      expect((await networks()).find((n) => n.Name === 'tend-backend')).toMatchObject({
        Internal: true,
        Labels: { tier: 'backend', 'tend.address': 'podman.networks/backend' },
      });
      const after = await tend(['plan', dir]);
      expect(after.code, after.stdout).toBe(0);
    });

    it('a changed field is a replace that deletes the old network first (same name), gated until approved', async () => {
      const main = join(dir, 'main.yaml');
      const text = readFileSync(main, 'utf8');
      writeFileSync(main, text.replace('  Internal: true\n', '  Internal: false\n'));
      const before = (await networks()).find((n) => n.Name === 'tend-backend');

      const plan = await tend(['plan', dir]);
      expect(plan.code).toBe(2);
      expect(plan.stdout).toContain('-/+ podman.networks/backend  must be replaced');
      expect(plan.stdout).toContain('Internal: true → false   # forces replacement');
      expect(plan.stdout).toContain('needs --approve-destroy');
      // Without the approval nothing is sent: exit 3, the network as it was.
      const gated = await tend(['apply', dir, '--yes']);
      expect(gated.code, gated.stdout + gated.stderr).toBe(3);
      expect((await networks()).find((n) => n.Name === 'tend-backend')).toEqual(before);

      const apply = await tend(['apply', dir, '--yes', '--approve-destroy']);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      expect((await networks()).filter((n) => n.Name === 'tend-backend')).toMatchObject([
        { Internal: false, Labels: { tier: 'backend', 'tend.address': 'podman.networks/backend' } },
      ]);
      expect((await tend(['plan', dir])).code).toBe(0);
    });

    it("the secret's value appears in no output and nowhere in the store or the ledger", async () => {
      await tend(['plan', dir, '--json']);
      await tend(['status', dir, '--json']);
      await tend(['history', dir, '--json']);
      const files = filesUnder(join(dir, '.tend'));
      expect(files.map((f) => f.path).some((p) => p.endsWith('.db'))).toBe(true);
      expect(leaks([SECRET, SECRET_B64], outputs, files)).toEqual([]);
      // It did reach Podman: the secret exists, and Podman's own store holds the declared value.
      const [secret] = await secrets();
      expect(secret?.Spec.Name).toBe('tend-db-password');
      const stored = readFileSync(
        join(podman.dir, 'root', 'secrets', 'filedriver', 'secretsdata.json'),
        'utf8',
      );
      expect(JSON.parse(stored)).toEqual({ [secret!.ID]: SECRET_B64 });
    });

    it('a secret removed from the intent is deleted; the other objects stay', async () => {
      const main = join(dir, 'main.yaml');
      const text = readFileSync(main, 'utf8');
      const at = text.indexOf('type: podman.secrets');
      expect(at).toBeGreaterThan(0);
      writeFileSync(main, text.slice(0, text.lastIndexOf('---', at)));

      const apply = await tend(['apply', dir, '--yes']);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      expect(apply.stdout).toContain('- podman.secrets/db-password  deleted tend-db-password');
      expect(await secrets()).toEqual([]);
      expect((await networks()).map((n) => n.Name).sort()).toEqual([
        'bridge',
        'tend-backend',
        'tend-frontend',
      ]);
      expect((await volumes()).map((v) => v.Name)).toEqual(['tend-pgdata']);
    });
  },
);
