import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALERTMANAGER,
  startAlertmanager,
  type AlertmanagerHandle,
} from '../support/alertmanager.js';
import { copyExampleFiles, ROOT, runCli } from '../support/cli.js';

// Issue 12, Alertmanager: silences managed through the real CLI against a real Alertmanager 0.25,
// from its unmodified Swagger 2.0 document plus examples/alertmanager/specs/alertmanager.overlay.yaml.
// Silences expire instead of being deleted, cannot change in place (every change is a replace), carry
// Tend's marker at the end of their comment, and are written by people all the time: a person's
// silence is never Tend's. The steps build on each other (one server, one intent directory), in order.

const EXAMPLE = join(ROOT, 'examples', 'alertmanager');
const SPEC = join(EXAMPLE, 'specs', 'alertmanager-0.25.0.swagger.json');
const OVERLAY = join(EXAMPLE, 'specs', 'alertmanager.overlay.yaml');
const EXAMPLE_ENDPOINT = 'http://127.0.0.1:9093/api/v2';

interface Silence {
  id: string;
  status: { state: string };
  comment: string;
  createdBy: string;
  startsAt: string;
  endsAt: string;
  matchers: { name: string; value: string; isRegex: boolean; isEqual?: boolean }[];
}

describe.skipIf(ALERTMANAGER.skip)(
  `Alertmanager end to end (CLI, real prometheus-alertmanager)${ALERTMANAGER.note}`,
  () => {
    let am: AlertmanagerHandle;
    let dir: string;
    const tend = (args: string[]) => runCli(args);
    const main = () => join(dir, 'main.yaml');

    async function silences(): Promise<Silence[]> {
      const r = await am.api('GET', '/silences');
      expect(r.status).toBe(200);
      return r.body as Silence[];
    }
    const live = async () => (await silences()).filter((s) => s.status.state !== 'expired');
    const tendsOwn = async (name: string) =>
      (await live()).filter((s) => s.comment.includes(`/am.silences/${name}`));

    /** A person's silence, as the Alertmanager UI or amtool would post it. */
    const HUMAN = {
      matchers: [
        { name: 'job', value: 'postgres', isRegex: false },
        { name: 'env', value: 'staging|dev', isRegex: true },
      ],
      startsAt: '2020-01-01T00:00:00Z',
      endsAt: '2030-01-01T00:00:00Z',
      createdBy: 'alice',
      comment: 'Planned database maintenance',
    };
    let humanId = '';

    beforeAll(async () => {
      am = await startAlertmanager();
      dir = mkdtempSync(join(tmpdir(), 'tend-alertmanager-intent-'));
      copyExampleFiles(EXAMPLE, dir);
      const text = readFileSync(main(), 'utf8');
      if (!text.includes(EXAMPLE_ENDPOINT)) {
        throw new Error(`examples/alertmanager: expected endpoint ${EXAMPLE_ENDPOINT}`);
      }
      writeFileSync(main(), text.replace(EXAMPLE_ENDPOINT, am.apiUrl));
    });
    afterAll(async () => {
      await am?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('providers inspect: silences from the document alone (the singular item path); with the overlay, silences with a marker in the comment', async () => {
      const bare = await tend(['providers', 'inspect', SPEC, '--json']);
      expect(bare.code, bare.stderr).toBe(0);
      const bareReport = JSON.parse(bare.stdout) as {
        types: Record<string, unknown>[];
        unmapped: { path: string; reason: string }[];
      };
      expect(bareReport.types).toHaveLength(1);
      expect(bareReport.types[0]).toMatchObject({
        name: 'silences',
        collectionPath: '/silences',
        itemPath: '/silences/{silenceID}',
        operations: {
          read: {
            method: 'GET',
            path: '/silence/{silenceID}',
            assigned: 'inferred: /silence/{silenceID} (singular) is the item path of /silences',
          },
          delete: { method: 'DELETE', path: '/silence/{silenceID}' },
        },
      });
      expect(bareReport.unmapped.map((u) => u.path)).not.toContain('/silence/{silenceID}');

      const r = await tend(['providers', 'inspect', SPEC, '--overlay', OVERLAY, '--json']);
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as {
        types: Record<string, unknown>[];
        warnings: string[];
      };
      expect(report.warnings).toEqual([]);
      expect(report.types).toHaveLength(1);
      expect(report.types[0]).toMatchObject({
        name: 'silences',
        collectionPath: '/silences',
        itemPath: '/silences/{silenceID}',
        operations: { read: { path: '/silence/{silenceID}', assigned: 'x-tend-op read' } },
        identity: 'marker',
        idField: 'id',
        markerField: 'comment',
        markerKind: 'text',
        update: null,
        createOnly: ['comment', 'createdBy', 'endsAt', 'matchers', 'startsAt'],
        outputOnly: ['id'],
        absentWhen: [{ field: 'status.state', in: ['expired'] }],
        createIdField: 'silenceID',
      });

      const text = await tend(['providers', 'inspect', SPEC, '--overlay', OVERLAY]);
      expect(text.stdout).toContain('identity     marker (a token at the end of comment)');
    });

    it('applies from empty: two silences, each with its marker after the declared comment', async () => {
      expect(await silences()).toEqual([]);
      const apply = await tend(['apply', dir]);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      expect(apply.stdout).toContain('Apply complete: 2 converged.');

      const db = await tendsOwn('db-maintenance');
      expect(db).toHaveLength(1);
      expect(db[0]!.comment).toMatch(
        /^Planned database maintenance \[tend:[a-z0-9._-]+\/am\.silences\/db-maintenance#[^\s\]]+\]$/,
      );
      expect(db[0]!.status.state).toBe('active');
      // Declared in the past: Alertmanager moved the start to the moment of the create.
      expect(Date.parse(db[0]!.startsAt)).toBeGreaterThan(Date.parse('2026-01-01T00:00:00Z'));
      // Answered with milliseconds ("….000Z"), declared without: the same instant.
      expect(db[0]!.endsAt).toBe('2030-01-01T00:00:00.000Z');
      const backup = await tendsOwn('backup-window');
      expect(backup.map((s) => s.status.state)).toEqual(['pending']);
    });

    it('plans nothing afterwards: the marker, the moved start and the spelling of times are not drift', async () => {
      const plan = await tend(['plan', dir]);
      expect(plan.code, plan.stdout + plan.stderr).toBe(0);
      expect(plan.stdout).toContain('No changes. 2 resources match the intent.');
    });

    it("leaves a person's silence with the same matchers and comment alone", async () => {
      const posted = await am.api('POST', '/silences', HUMAN);
      expect(posted.status).toBe(200);
      humanId = (posted.body as { silenceID: string }).silenceID;
      const plan = await tend(['plan', dir]);
      expect(plan.code, plan.stdout + plan.stderr).toBe(0);
      expect(plan.stdout).toContain('No changes. 2 resources match the intent.');
      expect(plan.stdout).not.toContain(humanId);
    });

    it('puts back a silence a person expired, as a new silence', async () => {
      const [db] = await tendsOwn('db-maintenance');
      const expired = await am.api('DELETE', `/silence/${db!.id}`);
      expect(expired.status).toBe(200);
      // Tend waits up to 10 s after a create before it believes an object it cannot see is gone
      // (eventual consistency); the plan shows the create once that window has passed.
      let plan = await tend(['plan', dir]);
      const deadline = Date.now() + 30_000;
      while (!plan.stdout.includes('+ am.silences/db-maintenance  will be created')) {
        expect(Date.now(), plan.stdout + plan.stderr).toBeLessThan(deadline);
        await new Promise((r) => setTimeout(r, 1000));
        plan = await tend(['plan', dir]);
      }
      expect(plan.code).toBe(2);
      expect(plan.stdout).toContain(
        'Plan: 1 to create, 0 to update, 0 to replace, 0 to delete, 1 unchanged.',
      );

      const apply = await tend(['apply', dir]);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      const again = await tendsOwn('db-maintenance');
      expect(again).toHaveLength(1);
      expect(again[0]!.id).not.toBe(db!.id);
      const human = (await silences()).find((s) => s.id === humanId);
      expect(human?.status.state).toBe('active');
      const second = await tend(['plan', dir]);
      expect(second.stdout).toContain('No changes. 2 resources match the intent.');
    });

    it('reverts a comment a person edited in place (marker removed) with a replace', async () => {
      const [db] = await tendsOwn('db-maintenance');
      const {
        status: _status,
        updatedAt: _updatedAt,
        ...postable
      } = db as Silence & {
        updatedAt: string;
      };
      const edited = await am.api('POST', '/silences', { ...postable, comment: 'edited by bob' });
      expect(edited.status).toBe(200);
      // Alertmanager changes the comment of an active silence in place: same id.
      expect((edited.body as { silenceID: string }).silenceID).toBe(db!.id);

      const plan = await tend(['plan', dir]);
      expect(plan.code, plan.stdout + plan.stderr).toBe(2);
      expect(plan.stdout).toContain('-/+ am.silences/db-maintenance  must be replaced');
      expect(plan.stdout).toContain('comment: "edited by bob" → "Planned database maintenance"');

      const apply = await tend(['apply', dir, '--yes']);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      const now = await tendsOwn('db-maintenance');
      expect(now).toHaveLength(1);
      expect(now[0]!.comment).toMatch(/^Planned database maintenance \[tend:/);
      expect((await silences()).find((s) => s.id === db!.id)?.status.state).toBe('expired');
      const second = await tend(['plan', dir]);
      expect(second.stdout).toContain('No changes. 2 resources match the intent.');
    });

    it('replaces a silence whose declared comment changed: create the new one, expire the old', async () => {
      const [before] = await tendsOwn('backup-window');
      writeFileSync(
        main(),
        readFileSync(main(), 'utf8').replace(
          'Nightly backups make the disks busy',
          'Nightly backups (window moved)',
        ),
      );
      const plan = await tend(['plan', dir]);
      expect(plan.code).toBe(2);
      expect(plan.stdout).toContain('-/+ am.silences/backup-window  must be replaced');
      const apply = await tend(['apply', dir, '--yes']);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      const after = await tendsOwn('backup-window');
      expect(after).toHaveLength(1);
      expect(after[0]!.id).not.toBe(before!.id);
      expect(after[0]!.comment).toMatch(/^Nightly backups \(window moved\) \[tend:/);
      const second = await tend(['plan', dir]);
      expect(second.stdout).toContain('No changes. 2 resources match the intent.');
    });

    it("removal from the intent expires Tend's silence, and only Tend's", async () => {
      const text = readFileSync(main(), 'utf8');
      writeFileSync(main(), text.slice(0, text.indexOf('---\n# Pending until it starts.')));
      const [backup] = await tendsOwn('backup-window');
      const plan = await tend(['plan', dir]);
      expect(plan.code).toBe(2);
      expect(plan.stdout).toContain(`- am.silences/backup-window  will be deleted (${backup!.id}`);
      const apply = await tend(['apply', dir, '--yes']);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      expect(await tendsOwn('backup-window')).toEqual([]);
      expect((await silences()).find((s) => s.id === backup!.id)?.status.state).toBe('expired');
      expect((await silences()).find((s) => s.id === humanId)?.status.state).toBe('active');
      const second = await tend(['plan', dir]);
      expect(second.code).toBe(0);
      expect(second.stdout).toContain('No changes. 1 resource match the intent.');
    });
  },
);
