import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// What an intent may make Tend read, through the built `tend` against a real sandbox process:
// secret references only in secret fields and only from trusted directories (docs/intent.md,
// "Secrets"), and intent files only from the intent directory, completely or not at all.

const HOSTNAME = '/etc/hostname';
const digest = (secret: string) => `sha256:${createHash('sha256').update(secret).digest('hex')}`;
/** What Tend sends for a file: its text without the final newline. */
const secretOf = (file: string) => readFileSync(file, 'utf8').replace(/\r?\n$/, '');

const provider = (url: string) => `kind: Provider
name: sb
type: openapi
spec: ./sandbox.openapi.json
endpoint: ${url}
`;

const network = `kind: Resource
type: sb.networks
name: main
spec:
  name: main
  cidr: 10.0.0.0/16
`;

const instance = (name: string, password: string) => `kind: Resource
type: sb.instances
name: ${name}
spec:
  name: ${name}
  network_id: \${sb.networks/main.id}
  image: debian-12
  admin_password: { fromFile: ${password} }
`;

const bucket = `kind: Resource
type: sb.buckets
name: assets
spec:
  name: tend-confined-assets
`;

describe.skipIf(!existsSync(HOSTNAME))(
  'files an intent may make tend read (CLI, real sandbox)',
  () => {
    let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
    let dir: string;
    let outside: string;
    const write = (file: string, text: string) => writeFileSync(join(dir, file), text);
    const remove = (file: string) => rmSync(join(dir, file), { force: true });
    const codeLines = (stderr: string, code: string) =>
      stderr.split('\n').filter((l) => l.includes(`error[${code}]`));

    beforeAll(async () => {
      sandbox = await startSandboxProcess();
      dir = realpathSync(mkdtempSync(join(tmpdir(), 'tend-confined-')));
      outside = realpathSync(mkdtempSync(join(tmpdir(), 'tend-confined-outside-')));
      copyFileSync(join(ROOT, 'src', 'sandbox', 'openapi.json'), join(dir, 'sandbox.openapi.json'));
      write('provider.yaml', provider(sandbox.url));
      write('network.yaml', network);
    });
    afterAll(async () => {
      await sandbox?.stop();
      for (const d of [dir, outside]) if (d) rmSync(d, { recursive: true, force: true });
    });

    it('refuses fromFile: /etc/hostname in a tag, at file:line:column, before anything is sent', async () => {
      write(
        'tagged.yaml',
        network.replace('name: main', 'name: tagged') + `  tags: { fromFile: ${HOSTNAME} }\n`,
      );
      for (const args of [
        ['validate', dir],
        ['plan', dir],
        ['apply', dir, '--yes'],
      ]) {
        const r = await runCli(args);
        expect(r.code, r.stdout + r.stderr).toBe(1);
        const [line] = codeLines(r.stderr, 'secret.not_allowed');
        expect(line, r.stderr).toBe(
          `${join(dir, 'tagged.yaml')}:7:11: error[secret.not_allowed]: \`spec.tags\` is not a secret field of networks: { fromFile } is read only into a field the provider marks sensitive, write-only or password, or one listed in \`secrets:\` (at spec.tags.fromFile)`,
        );
        expect(r.stderr).toContain('hint: if `tags` really holds a secret');
        expect(r.stderr).not.toContain(secretOf(HOSTNAME));
      }
      expect((await sandbox.stats()).requests).toBe(0);
      expect(await sandbox.objects()).toEqual([]);
      remove('tagged.yaml');
    });

    it('sends the same content from a file inside the intent directory, in a sensitive field', async () => {
      mkdirSync(join(dir, 'secrets'));
      copyFileSync(HOSTNAME, join(dir, 'secrets', 'hostname'));
      write('web.yaml', instance('web', 'secrets/hostname'));
      write('bucket.yaml', bucket);
      const r = await runCli(['apply', dir, '--yes']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const web = (await sandbox.objects()).find((o) => o.fields['name'] === 'web');
      // The sandbox keeps a digest of a secret: it received exactly the file's content.
      expect(web?.fields['admin_password']).toBe(digest(secretOf(HOSTNAME)));
    });

    it('reads a file outside only from a directory named in TEND_SECRET_DIRS', async () => {
      writeFileSync(join(outside, 'db-password'), 'from-a-trusted-dir\n');
      write('db.yaml', instance('db', join(outside, 'db-password')));
      const refused = await runCli(['validate', dir]);
      expect(refused.code).toBe(1);
      expect(codeLines(refused.stderr, 'secret.outside')).toEqual([
        `${join(dir, 'db.yaml')}:8:31: error[secret.outside]: \`spec.admin_password.fromFile\` names ${join(outside, 'db-password')}: outside the intent directory (at spec.admin_password.fromFile)`,
      ]);
      const env = { TEND_SECRET_DIRS: outside };
      const r = await runCli(['apply', dir, '--yes'], { env });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const db = (await sandbox.objects()).find((o) => o.fields['name'] === 'db');
      expect(db?.fields['admin_password']).toBe(digest('from-a-trusted-dir'));
    });

    it('refuses a secret file that is a link leading outside', async () => {
      symlinkSync(HOSTNAME, join(dir, 'secrets', 'link'));
      write('cache.yaml', instance('cache', 'secrets/link'));
      for (const command of ['validate', 'plan']) {
        const r = await runCli([command, dir], { env: { TEND_SECRET_DIRS: outside } });
        expect(r.code).toBe(1);
        expect(codeLines(r.stderr, 'secret.outside')).toEqual([
          `${join(dir, 'cache.yaml')}:8:31: error[secret.outside]: \`spec.admin_password.fromFile\` names secrets/link, which leads to ${HOSTNAME}: outside the intent directory and the directories in TEND_SECRET_DIRS (at spec.admin_password.fromFile)`,
        ]);
      }
      remove('cache.yaml');
    });

    it('refuses an intent file that is a link leading outside: no plan runs, nothing is pruned', async () => {
      const before = await sandbox.objects();
      expect(before.map((o) => o.fields['name']).sort()).toEqual(
        ['db', 'main', 'tend-confined-assets', 'web'].sort(),
      );
      // The bucket's document moves out of the directory and is linked back: it must not count as
      // deleted intent (which would prune the bucket), nor be read from where it now lives.
      renameSync(join(dir, 'bucket.yaml'), join(outside, 'bucket.yaml'));
      symlinkSync(join(outside, 'bucket.yaml'), join(dir, 'bucket.yaml'));
      const stats = await sandbox.stats();
      const message = `${join(dir, 'bucket.yaml')} is a symbolic link to ${join(outside, 'bucket.yaml')}, outside the intent directory ${dir}`;
      for (const args of [
        ['plan', dir],
        ['apply', dir, '--yes'],
      ]) {
        const r = await runCli(args, { env: { TEND_SECRET_DIRS: outside } });
        expect(r.code, r.stdout + r.stderr).toBe(1);
        expect(codeLines(r.stderr, 'intent.outside')).toEqual([
          `${join(dir, 'bucket.yaml')}:1:1: error[intent.outside]: ${message}`,
        ]);
        expect(r.stdout).not.toContain('to delete');
      }
      const json = await runCli(['apply', dir, '--yes', '--json'], {
        env: { TEND_SECRET_DIRS: outside },
      });
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({
        ok: false,
        diagnostics: [{ code: 'intent.outside', message, line: 1, column: 1 }],
      });
      const after = await sandbox.stats();
      expect(after.requests).toBe(stats.requests); // not even observed
      const ids = (objects: typeof before) => objects.map((o) => `${o.type}/${o.id}`).sort();
      expect(ids(await sandbox.objects())).toEqual(ids(before));
    });

    it('follows a link to a file inside the directory: the same intent, nothing to change', async () => {
      unlinkSync(join(dir, 'bucket.yaml'));
      mkdirSync(join(dir, 'shared'));
      renameSync(join(outside, 'bucket.yaml'), join(dir, 'shared', 'bucket.yaml'));
      symlinkSync('shared/bucket.yaml', join(dir, 'bucket.yaml'));
      const r = await runCli(['plan', dir], { env: { TEND_SECRET_DIRS: outside } });
      expect(r.stdout + r.stderr).toContain('No changes.');
      expect(r.code).toBe(0);
    });

    it('reports a FIFO named like an intent file at once, without waiting for a writer', async () => {
      execFileSync('mkfifo', [join(dir, 'pipe.yaml')]);
      const r = await runCli(['validate', dir], { timeoutMs: 20_000 });
      expect(r.code).toBe(1);
      expect(codeLines(r.stderr, 'intent.not_file')).toEqual([
        `${join(dir, 'pipe.yaml')}:1:1: error[intent.not_file]: ${join(dir, 'pipe.yaml')} is a FIFO (named pipe), not a regular file`,
      ]);
      unlinkSync(join(dir, 'pipe.yaml'));
    });
  },
);
