import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALERTMANAGER,
  startAlertmanager,
  type AlertmanagerHandle,
} from '../support/alertmanager.js';
import { ROOT, runCli } from '../support/cli.js';
import { overlayUpdates, probeArgs } from '../support/probe.js';

// `tend providers probe` against a real Alertmanager 0.25, given the structure its document cannot
// say (test/e2e/probe/alertmanager.structure.overlay.yaml). Silences have no name, so there is no
// second create to try; what there is to learn is where a marker survives, compared with
// examples/alertmanager's hand-written overlay. A deleted silence is expired, not removed (it stays
// listed as expired for 120 h): "left as it was" means no silence in force was added.

const SPEC = join(ROOT, 'examples/alertmanager/specs/alertmanager-0.25.0.swagger.json');
const STRUCTURE = join(ROOT, 'test/e2e/probe/alertmanager.structure.overlay.yaml');
const HAND = join(ROOT, 'examples/alertmanager/specs/alertmanager.overlay.yaml');

describe.skipIf(ALERTMANAGER.skip)(
  `tend providers probe against Alertmanager${ALERTMANAGER.note}`,
  () => {
    let am: AlertmanagerHandle;
    let dir: string;

    beforeAll(async () => {
      am = await startAlertmanager();
      dir = mkdtempSync(join(tmpdir(), 'tend-probe-am-'));
    });
    afterAll(async () => {
      await am?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const inForce = async () =>
      ((await am.api('GET', '/silences')).body as { id: string; status: { state: string } }[])
        .filter((s) => s.status.state !== 'expired')
        .map((s) => s.id)
        .sort();

    it('learns the marker place the hand-written overlay states, and leaves no silence in force', async () => {
      const before = await inForce();
      const out = join(dir, 'learned.yaml');
      const r = await runCli(
        probeArgs(
          SPEC,
          STRUCTURE,
          am.apiUrl,
          '--json',
          '--out',
          out,
          '--journal',
          join(dir, 'j.sqlite'),
        ),
      );
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as {
        types: { type: string; status: string }[];
        leftovers: unknown[];
        facts: { kind: string; field?: string; kept?: boolean }[];
      };
      expect(report.types.map((t) => `${t.type} ${t.status}`)).toEqual(['silences probed']);
      expect(report.leftovers).toEqual([]);
      expect(await inForce()).toEqual(before);
      expect(report.facts.filter((f) => f.kind === 'marker')).toEqual([
        expect.objectContaining({ field: 'comment', kept: true }),
      ]);

      const learned = overlayUpdates(out);
      const hand = overlayUpdates(HAND);
      const document = JSON.parse(readFileSync(SPEC, 'utf8')) as {
        definitions: Record<string, { properties?: Record<string, Record<string, unknown>> }>;
      };
      // The marker place: as stated by hand.
      expect(learned.get('$.definitions.postableSilence')?.['x-tend-marker']).toEqual(
        hand.get('$.definitions.postableSilence')?.['x-tend-marker'],
      );
      // A matcher's isEqual filled in as true: the document states that default itself.
      expect(learned.get('$.definitions.matcher.properties.isEqual')?.['default']).toBe(
        document.definitions['matcher']!.properties!['isEqual']!['default'],
      );
      // The hand-written overlay is silent on read-after-write; the probe saw a new silence listed
      // at once (docs/onboard-rest-api.md lists this as something the probe adds).
      expect(learned.get('$')?.['x-tend-consistent-reads']).toBe(true);
      expect(hand.get('$')?.['x-tend-consistent-reads']).toBeUndefined();
      // Nothing else was written.
      expect([...learned.keys()].sort()).toEqual([
        '$',
        '$.definitions.matcher.properties.isEqual',
        '$.definitions.postableSilence',
      ]);
    });
  },
);
