import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadIntent } from './index.js';
import { decodeUtf8, firstInvalidUtf8, readIntentFiles } from './read-files.js';

// Intent loads completely or not at all: every YAML entry of the directory is read or is an error.

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function tempDir(prefix = 'tend-read-'): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  dirs.push(dir);
  return dir;
}

const NET =
  'kind: Resource\ntype: sb.networks\nname: main\nspec: { name: main, cidr: 10.0.0.0/16 }\n';

describe('readIntentFiles', () => {
  it('follows a link to a file inside the directory, under the link name', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'shared'));
    await writeFile(join(dir, 'shared', 'net.yaml.txt'), NET);
    await symlink('shared/net.yaml.txt', join(dir, 'net.yaml'));
    const { files, diagnostics } = await readIntentFiles(dir);
    expect(diagnostics).toEqual([]);
    expect(files).toEqual([{ path: join(dir, 'net.yaml'), text: NET }]);
  });

  it('refuses a link leading outside the directory, naming where it leads', async () => {
    const dir = await tempDir();
    const elsewhere = await tempDir('tend-elsewhere-');
    await writeFile(join(elsewhere, 'net.yaml'), NET);
    await writeFile(join(dir, 'a.yaml'), NET);
    await symlink(join(elsewhere, 'net.yaml'), join(dir, 'b.yaml'));
    const { files, diagnostics } = await readIntentFiles(dir);
    expect(files.map((f) => f.path)).toEqual([join(dir, 'a.yaml')]);
    expect(diagnostics).toEqual([
      {
        code: 'intent.outside',
        severity: 'error',
        message: `${join(dir, 'b.yaml')} is a symbolic link to ${join(elsewhere, 'net.yaml')}, outside the intent directory ${dir}`,
        hint: expect.stringContaining('copy the file into the intent directory') as string,
        file: join(dir, 'b.yaml'),
        line: 1,
        column: 1,
      },
    ]);
  });

  it('refuses a link out even through a link to an inner directory that leads out', async () => {
    const dir = await tempDir();
    const elsewhere = await tempDir('tend-elsewhere-');
    await writeFile(join(elsewhere, 'net.yaml'), NET);
    await symlink(elsewhere, join(dir, 'inner'));
    await symlink('inner/net.yaml', join(dir, 'main.yaml'));
    const { diagnostics } = await readIntentFiles(dir);
    expect(diagnostics.map((d) => d.code)).toEqual(['intent.outside']);
  });

  it('reports broken links and loops of links', async () => {
    const dir = await tempDir();
    await symlink('nowhere.yaml', join(dir, 'a.yaml'));
    await symlink('c.yaml', join(dir, 'b.yaml'));
    await symlink('b.yaml', join(dir, 'c.yaml'));
    const { files, diagnostics } = await readIntentFiles(dir);
    expect(files).toEqual([]);
    expect(diagnostics.map((d) => [d.code, d.file, d.message])).toEqual([
      [
        'intent.broken_link',
        join(dir, 'a.yaml'),
        `${join(dir, 'a.yaml')} is a symbolic link to nowhere.yaml, which does not exist`,
      ],
      [
        'intent.broken_link',
        join(dir, 'b.yaml'),
        `${join(dir, 'b.yaml')} is a symbolic link to a loop of symbolic links`,
      ],
      [
        'intent.broken_link',
        join(dir, 'c.yaml'),
        `${join(dir, 'c.yaml')} is a symbolic link to a loop of symbolic links`,
      ],
    ]);
  });

  it('reports a FIFO without opening it (reading one would wait for a writer forever)', async () => {
    const dir = await tempDir();
    execFileSync('mkfifo', [join(dir, 'pipe.yaml')]);
    await symlink('pipe.yaml', join(dir, 'via-link.yaml'));
    const { diagnostics } = await readIntentFiles(dir);
    expect(diagnostics.map((d) => [d.code, d.message])).toEqual([
      ['intent.not_file', `${join(dir, 'pipe.yaml')} is a FIFO (named pipe), not a regular file`],
      [
        'intent.not_file',
        `${join(dir, 'via-link.yaml')} is a FIFO (named pipe), not a regular file`,
      ],
    ]);
  }, 5_000);

  it('skips sub-directories, and links to them, like any directory (not intent)', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'main.yaml'), NET);
    await mkdir(join(dir, 'old.yaml'));
    await symlink('old.yaml', join(dir, 'older.yaml'));
    const { files, diagnostics } = await readIntentFiles(dir);
    expect(diagnostics).toEqual([]);
    expect(files.map((f) => f.path)).toEqual([join(dir, 'main.yaml')]);
  });

  it.skipIf(process.getuid?.() === 0)(
    'reports a file it may not read (skipped as root, who may read anything)',
    async () => {
      const dir = await tempDir();
      await writeFile(join(dir, 'main.yaml'), NET);
      await chmod(join(dir, 'main.yaml'), 0o000);
      const { diagnostics } = await readIntentFiles(dir);
      expect(diagnostics.map((d) => [d.code, d.file])).toEqual([
        ['intent.unreadable', join(dir, 'main.yaml')],
      ]);
    },
  );

  it('reports invalid UTF-8 at the line and column of the first bad byte', async () => {
    const dir = await tempDir();
    const bytes = Buffer.concat([
      Buffer.from('kind: Resource\nname: é', 'utf8'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('\n', 'utf8'),
    ]);
    await writeFile(join(dir, 'main.yaml'), bytes);
    const { files, diagnostics } = await readIntentFiles(dir);
    expect(files).toEqual([]);
    expect(diagnostics).toEqual([
      {
        code: 'intent.encoding',
        severity: 'error',
        message: `${join(dir, 'main.yaml')}: invalid UTF-8 at byte 23 (0xc3 0x28 0x0a)`,
        hint: 'save the file as UTF-8',
        file: join(dir, 'main.yaml'),
        line: 2,
        column: 8,
      },
    ]);
  });
});

describe('decodeUtf8', () => {
  it('drops a UTF-8 byte order mark, so lines and columns stay those of the text', () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('kind: x\n')]);
    expect(decodeUtf8(bytes)).toEqual({ text: 'kind: x\n' });
  });

  it('refuses UTF-16 (either byte order) with a hint', () => {
    for (const bom of [
      [0xff, 0xfe],
      [0xfe, 0xff],
    ]) {
      expect(decodeUtf8(Buffer.from([...bom, 0x6b, 0x00]))).toEqual({
        problem: 'the file is UTF-16 (it starts with a UTF-16 byte order mark); intent is UTF-8',
        hint: 'save the file as UTF-8',
        line: 1,
        column: 1,
      });
    }
  });

  it('counts columns in characters after a byte order mark and multi-byte text', () => {
    const bytes = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('a: 日本\n'),
      Buffer.from([0xff]),
    ]);
    expect(decodeUtf8(bytes)).toMatchObject({ line: 2, column: 1 });
    expect(decodeUtf8(Buffer.concat([Buffer.from('a: 日本'), Buffer.from([0x80])]))).toMatchObject({
      line: 1,
      column: 6,
    });
  });
});

describe('firstInvalidUtf8', () => {
  const table: { bytes: number[]; at: number; reason: string }[] = [
    { bytes: [0x61, 0x62], at: -1, reason: 'ASCII' },
    {
      bytes: [0xc3, 0xa9, 0xe6, 0x97, 0xa5, 0xf0, 0x9f, 0x98, 0x80],
      at: -1,
      reason: '2, 3, 4 bytes',
    },
    { bytes: [0x61, 0x80], at: 1, reason: 'a lone continuation byte' },
    { bytes: [0xc0, 0x80], at: 0, reason: 'an overlong NUL' },
    { bytes: [0xe0, 0x80, 0x80], at: 0, reason: 'an overlong 3-byte form' },
    { bytes: [0xed, 0xa0, 0x80], at: 0, reason: 'a UTF-16 surrogate' },
    { bytes: [0xf4, 0x90, 0x80, 0x80], at: 0, reason: 'above U+10FFFF' },
    { bytes: [0xf5, 0x80, 0x80, 0x80], at: 0, reason: 'a byte never used' },
    { bytes: [0x61, 0xe6, 0x97], at: 1, reason: 'cut short at the end' },
    { bytes: [0xe6, 0x41, 0xa5], at: 0, reason: 'interrupted by ASCII' },
  ];
  for (const c of table) {
    it(c.reason, () => {
      expect(firstInvalidUtf8(Uint8Array.from(c.bytes))).toBe(c.at);
      // The check agrees with the platform's strict decoder on validity.
      let valid = true;
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(c.bytes));
      } catch {
        valid = false;
      }
      expect(valid).toBe(c.at === -1);
    });
  }
});

describe('loadIntent with a file it cannot read', () => {
  it('returns no intent at all: nothing declared elsewhere is planned without it', async () => {
    const dir = await tempDir();
    const elsewhere = await tempDir('tend-elsewhere-');
    await writeFile(join(dir, 'sandbox.json'), '{}');
    await writeFile(
      join(dir, 'a.yaml'),
      'kind: Provider\nname: sb\ntype: openapi\nspec: ./sandbox.json\nendpoint: http://127.0.0.1:9/\n',
    );
    await writeFile(join(elsewhere, 'net.yaml'), NET);
    await symlink(join(elsewhere, 'net.yaml'), join(dir, 'b.yaml'));
    const result = await loadIntent(dir, {
      describe: () => Promise.resolve({ auditFeed: false, warnings: [], types: [] }),
    });
    expect(result.intent).toBeUndefined();
    expect(result.diagnostics.map((d) => d.code)).toEqual(['intent.outside']);
  });
});
