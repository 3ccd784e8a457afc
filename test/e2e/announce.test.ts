import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExample, runCli } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// `tend announce` as users and actors run it: the built CLI against the quickstart intent and a real
// sandbox process (the provider reads the platform's OpenAPI document from it). Build first.

interface StoredAnnouncement {
  id: string;
  address: string;
  field: string;
  value: unknown;
  actor: string;
  actorKind?: string;
  intent?: string;
  motivation?: { kind: string; ref?: string; urgency?: string; expiresAt?: string };
  createdAt: string;
  expiresAt: string;
  note?: string;
}

// Each test runs the CLI several times (each loads the intent and reads the platform's document).
describe('tend announce (CLI, real sandbox process)', { timeout: 120_000 }, () => {
  let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
  let ex: ReturnType<typeof copyExample>;
  /** Announcement files live outside the intent directory (there they would be read as intent). */
  let files: string;

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    ex = copyExample('quickstart', sandbox.url);
    files = mkdtempSync(join(tmpdir(), 'tend-announce-files-'));
  });
  afterAll(async () => {
    await sandbox?.stop();
    ex?.cleanup();
    if (files) rmSync(files, { recursive: true, force: true });
  });

  const listed = async (all = false): Promise<StoredAnnouncement[]> => {
    const r = await runCli(['announce', '--list', ...(all ? ['--all'] : []), '--json', ex.dir]);
    expect(r.code, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { announcements: StoredAnnouncement[] }).announcements;
  };

  it('stores an announcement given by flags, says what will be attributed to whom until when, and lists it', async () => {
    const r = await runCli([
      'announce',
      'sb.services/api',
      '--field',
      'replicas',
      '--value',
      '5',
      '--actor',
      'hpa',
      '--actor-kind',
      'controller',
      '--intent',
      'availability',
      '--motivation',
      'traffic',
      '--ref',
      'spike 2026-11-24',
      '--urgency',
      'high',
      '--ttl',
      '2h',
      ex.dir,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^announced [0-9a-f]{12}: a change of sb\.services\/api replicas to 5 will be attributed to hpa \(controller, intent availability, motivation traffic: spike 2026-11-24, urgency high\) until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in 2h\)\n$/,
    );

    const text = await runCli(['announce', '--list', ex.dir]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /^[0-9a-f]{12} {2}a change of sb\.services\/api replicas to 5 will be attributed to hpa \(controller, intent availability, motivation traffic: spike 2026-11-24, urgency high\) until .* UTC \(in (2h|1h59m)\)\n$/,
    );

    const [a] = await listed();
    expect(a).toMatchObject({
      address: 'sb.services/api',
      field: 'replicas',
      value: 5,
      actor: 'hpa',
      actorKind: 'controller',
      intent: 'availability',
      motivation: { kind: 'traffic', ref: 'spike 2026-11-24', urgency: 'high' },
    });
    expect(Date.parse(a!.expiresAt) - Date.parse(a!.createdAt)).toBe(2 * 3_600_000);
    expect(a!.motivation!.expiresAt).toBe(a!.expiresAt);
  });

  it('parses --value as JSON when it parses, else keeps it as text; answers in JSON with --json', async () => {
    const cases: [string, unknown][] = [
      ['true', true],
      ['"5"', '5'],
      ['nginx:1.27', 'nginx:1.27'],
    ];
    for (const [given, stored] of cases) {
      const r = await runCli([
        'announce',
        'sb.services/api',
        '--field',
        'spec.image',
        '--value',
        given,
        '--actor',
        'deploy-bot',
        '--json',
        ex.dir,
      ]);
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { ok: boolean; announcements: StoredAnnouncement[] };
      expect(out.ok).toBe(true);
      expect(out.announcements).toHaveLength(1);
      expect(out.announcements[0]).toMatchObject({ field: 'image', value: stored });
    }
  });

  it('stores a list from a YAML file, and a JSON file', async () => {
    const yamlFile = join(files, 'announce.yaml');
    writeFileSync(
      yamlFile,
      `# the autoscaler and the on-call engineer
- address: sb.services/api
  field: spec.replicas
  value: 6
  actor: hpa
  actorKind: controller
  motivation: { kind: traffic, ref: spike, urgency: high }
  ttl: 30m
- address: sb.networks/main
  field: cidr
  value: 10.20.0.0/16
  actor: alice
  actorKind: human
  intent: consistency
  motivation: incident:INC-42; urgency=critical
  note: |
    renumbered during the incident
`,
    );
    const y = await runCli(['announce', '-f', yamlFile, ex.dir]);
    expect(y.code, y.stderr).toBe(0);
    expect(y.stdout.trim().split('\n')).toHaveLength(2);
    expect(y.stdout).toContain('a change of sb.networks/main cidr to "10.20.0.0/16" will be');

    const jsonFile = join(files, 'announce.json');
    writeFileSync(
      jsonFile,
      JSON.stringify({
        address: 'sb.buckets/assets',
        field: 'versioning',
        value: false,
        actor: 'cost-bot',
        actorKind: 'agent',
        intent: 'cost',
        motivation: { kind: 'budget', ref: 'FIN-7' },
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      }),
    );
    const j = await runCli(['announce', '--file', jsonFile, ex.dir]);
    expect(j.code, j.stderr).toBe(0);

    const all = await listed();
    expect(all.map((a) => `${a.address} ${a.field} ${JSON.stringify(a.value)}`)).toEqual([
      'sb.services/api replicas 5',
      'sb.services/api image true',
      'sb.services/api image "5"',
      'sb.services/api image "nginx:1.27"',
      'sb.services/api replicas 6',
      'sb.networks/main cidr "10.20.0.0/16"',
      'sb.buckets/assets versioning false',
    ]);
    expect(all.find((a) => a.actor === 'alice')).toMatchObject({
      motivation: { kind: 'incident', ref: 'INC-42', urgency: 'critical' },
      note: 'renumbered during the incident\n',
    });
  });

  it('lists only active announcements, and expired ones too with --all', async () => {
    const r = await runCli([
      'announce',
      'sb.services/api',
      '--field',
      'replicas',
      '--value',
      '9',
      '--actor',
      'brief',
      '--ttl',
      '1s',
      ex.dir,
    ]);
    expect(r.code, r.stderr).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await listed()).some((a) => a.actor === 'brief')).toBe(false);
    expect((await listed(true)).some((a) => a.actor === 'brief')).toBe(true);
    const text = await runCli(['announce', '--list', '--all', ex.dir]);
    expect(text.stdout).toMatch(
      /replicas to 9 was attributed to brief until .* \(expired \d+s ago\)/,
    );
  });

  it('warns, and still stores, when the field exists but is not declared (nothing to arbitrate)', async () => {
    const r = await runCli([
      'announce',
      'sb.services/api',
      '--field',
      'tags.team',
      '--value',
      'web',
      '--actor',
      'alice',
      ex.dir,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      'warning: tags.team is not declared for sb.services/api in the intent: Tend does not manage it, so a change to it is not drift and there is nothing to arbitrate',
    );
  });

  const flags = ['--field', 'replicas', '--value', '5', '--actor', 'hpa'];
  /** Each case: the arguments, a file to write first, how many problems, and text each must show. */
  const bad: {
    name: string;
    args: () => string[];
    file?: string;
    count: number;
    errors: (string | RegExp)[];
  }[] = [
    {
      name: 'an unknown actor kind',
      args: () => ['sb.services/api', ...flags, '--actor-kind', 'robot'],
      count: 1,
      errors: [
        'error: --actor-kind: "robot" is not an actor kind: use one of human, controller, agent, pipeline, tend',
      ],
    },
    {
      name: 'a TTL that is not a duration',
      args: () => ['sb.services/api', ...flags, '--ttl', '2hours'],
      count: 1,
      errors: [
        'error: --ttl: "2hours" is not a duration; write a number and a unit between 1s and 30d, e.g. 30m, 2h, 1h30m or 7d',
      ],
    },
    {
      name: 'a TTL over 30 days',
      args: () => ['sb.services/api', ...flags, '--ttl', '31d'],
      count: 1,
      errors: [
        'error: --ttl: "31d" is longer than 30d; announce for at most 30d (announce again if it still holds, or write an Arbitration rule for a standing arrangement)',
      ],
    },
    {
      name: 'both a TTL and an expiry',
      args: () => [
        'sb.services/api',
        ...flags,
        '--ttl',
        '2h',
        '--expires-at',
        new Date(Date.now() + 3_600_000).toISOString(),
      ],
      count: 1,
      errors: [
        'error: --ttl: is given together with --expires-at; give one of them: --ttl counts from now (e.g. 2h), --expires-at is an ISO time',
      ],
    },
    {
      name: 'an unknown key in the file',
      args: () => ['-f', join(files, 'bad.yaml')],
      file: 'address: sb.services/api\nfield: replicas\nvalue: 5\nactor: hpa\nactorkind: controller\n',
      count: 1,
      errors: [/bad\.yaml:5:1: actorkind: unknown key; did you mean actorKind\?/],
    },
    {
      name: 'an unknown address',
      args: () => ['sb.service/api', ...flags],
      count: 1,
      errors: [
        'error: <address>: no resource sb.service/api in the intent or among the objects Tend manages; did you mean sb.services/api?',
      ],
    },
    {
      name: 'an unknown field',
      args: () => ['sb.services/api', '--field', 'replicsa', '--value', '5', '--actor', 'hpa'],
      count: 1,
      errors: ['error: --field: sb.services/api has no field replicsa', 'did you mean replicas?'],
    },
    {
      name: 'everything at once',
      args: () => [
        'sb.service/api',
        '--field',
        'replicas',
        '--value',
        '5',
        '--actor',
        'hpa',
        '--actor-kind',
        'robot',
        '--ttl',
        '31d',
      ],
      count: 3,
      errors: ['--actor-kind: "robot"', '--ttl: "31d"', '<address>: no resource sb.service/api'],
    },
  ];

  describe('bad input', () => {
    let stored = 0;
    beforeAll(async () => {
      stored = (await listed(true)).length;
    });

    it.each(bad)('exits 2 with every problem: $name', async (c) => {
      if (c.file !== undefined) writeFileSync(join(files, 'bad.yaml'), c.file);
      const r = await runCli(['announce', ...c.args(), ex.dir]);
      expect(r.code, r.stderr).toBe(2);
      for (const e of c.errors) {
        if (typeof e === 'string') expect(r.stderr).toContain(e);
        else expect(r.stderr).toMatch(e);
      }
      expect(r.stderr).toMatch(new RegExp(`${c.count} problems?; nothing was announced\\.\\n$`));
      expect(r.stdout).toBe('');
    });

    it('gives the problems as JSON with --json', async () => {
      const j = await runCli([
        'announce',
        'sb.service/api',
        ...flags,
        '--actor-kind',
        'robot',
        '--json',
        ex.dir,
      ]);
      expect(j.code).toBe(2);
      expect(JSON.parse(j.stdout)).toEqual({
        ok: false,
        errors: [
          '--actor-kind: "robot" is not an actor kind: use one of human, controller, agent, pipeline, tend',
          '<address>: no resource sb.service/api in the intent or among the objects Tend manages; did you mean sb.services/api?',
        ],
      });
    });

    it('stored nothing for any of them', async () => {
      expect(await listed(true)).toHaveLength(stored);
    });
  });
});
