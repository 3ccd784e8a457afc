import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Marker, WriteContext } from '../../core/index.js';
import type { AlertmanagerHandle } from '../../../test/support/alertmanager.js';
import { ALERTMANAGER, startAlertmanager } from '../../../test/support/alertmanager.js';
import { PAST } from './fields/instants.js';
import type { OpenApiProvider } from './openapi-provider.js';
import { loadOpenApiProvider } from './openapi-provider.js';

// Integration: the generic provider against a real Alertmanager 0.25, knowing nothing of it but its
// embedded (unmodified) Swagger 2.0 document and the overlay shipped in examples/alertmanager: a
// marker in a free-text comment, an id answered as `silenceID`, expired silences treated as gone,
// times compared as instants.

const SPEC = 'examples/alertmanager/specs/alertmanager-0.25.0.swagger.json';
const OVERLAY = 'examples/alertmanager/specs/alertmanager.overlay.yaml';
const MARKER: Marker = { workspace: 'ws', address: 'am.silences/db', op: 'op-1' };
const ctx: WriteContext = { actor: { actor: 'tend' }, marker: MARKER };

const SILENCE = {
  matchers: [{ name: 'job', value: 'db', isRegex: false }],
  startsAt: '2020-01-01T00:00:00Z',
  endsAt: '2030-01-01T00:00:00Z',
  createdBy: 'tend',
  comment: 'see [tend:other/x.y/z] first',
};

let am: AlertmanagerHandle;
let provider: OpenApiProvider;
/** The provider's wall clock: Unix ms, moved by the tests. */
let now = Date.parse('2026-11-25T12:00:00Z');

describe.skipIf(ALERTMANAGER.skip)(
  `openapi provider on a real Alertmanager${ALERTMANAGER.note}`,
  () => {
    beforeAll(async () => {
      am = await startAlertmanager();
      provider = await loadOpenApiProvider({
        name: 'am',
        spec: SPEC,
        overlay: OVERLAY,
        endpoint: am.apiUrl,
        workspace: 'ws',
        wallClock: () => now,
      });
    }, 30_000);
    afterAll(async () => {
      await am?.stop();
    });

    it('creates a silence: the id from silenceID, the marker after the declared comment', async () => {
      const created = await provider.create('silences', SILENCE, ctx);
      expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(created.marker).toEqual(MARKER);
      expect(created.fields['comment']).toBe(
        'see [tend:other/x.y/z] first [tend:ws/am.silences/db#op-1]',
      );
      // The declared comment compares equal to what was stored: the token is not the user's.
      const n = (path: string, v: unknown) => provider.normalize!('silences', path, v);
      expect(n('comment', created.fields['comment'])).toBe(n('comment', SILENCE.comment));
      expect(n('endsAt', created.fields['endsAt'])).toBe(n('endsAt', SILENCE.endsAt));
      expect(created.fields['endsAt']).toBe('2030-01-01T00:00:00.000Z');
      // Started "now" by the server; declared in the past: both compare as past.
      now = Date.parse(String(created.fields['startsAt'])) + 1000;
      expect(n('startsAt', created.fields['startsAt'])).toBe(PAST);
      expect(n('startsAt', SILENCE.startsAt)).toBe(PAST);
      expect(await provider.find!('silences', MARKER)).toMatchObject({ id: created.id });
    });

    it("lists a person's silence without a marker, and Tend's with its own", async () => {
      const posted = await am.api('POST', '/silences', { ...SILENCE, comment: 'by hand' });
      const theirs = (posted.body as { silenceID: string }).silenceID;
      const all = await provider.list('silences');
      expect(all.find((o) => o.id === theirs)?.marker).toBeUndefined();
      expect(all.filter((o) => o.marker?.address === MARKER.address)).toHaveLength(1);
    });

    it('treats an expired silence as gone: not listed, read as absent, deleting it again succeeds', async () => {
      const mine = (await provider.find!('silences', MARKER))!;
      await provider.delete('silences', mine.id, ctx);
      const raw = await am.api('GET', `/silence/${mine.id}`);
      expect(raw.body).toMatchObject({ status: { state: 'expired' } });
      expect(await provider.read('silences', mine.id)).toBeUndefined();
      expect((await provider.list('silences')).map((o) => o.id)).not.toContain(mine.id);
      expect(await provider.find!('silences', MARKER)).toBeUndefined();
      await provider.delete('silences', mine.id, ctx);
    });
  },
);
