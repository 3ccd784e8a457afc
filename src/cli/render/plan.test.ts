import { describe, expect, it } from 'vitest';
import type { Address } from '../../core/index.js';
import { assemblePlan } from '../../core/index.js';
import { renderPlan } from './plan.js';
import { styleFor } from './style.js';

/** No colours: what a pipe gets. */
const PLAIN = styleFor({ isTTY: false } as NodeJS.WriteStream);

describe('renderPlan: a stateful resource removed with what lives under it', () => {
  const removed = (name: string, stateful: boolean, dependsOn: Address[]) => ({
    address: name as Address,
    type: name.split('/')[0]!,
    objectId: name.split('/')[1]!,
    stateful,
    dependsOn,
  });
  const plan = assemblePlan(
    [],
    [
      removed('pdns.zones/z', true, []),
      removed('pdns.rrsets/a', false, ['pdns.zones/z']),
      removed('pdns.rrsets/b', false, ['pdns.zones/z']),
    ],
    false,
  );
  const text = renderPlan(plan, PLAIN);

  it('shows each rrset gated by the zone, saying why', () => {
    expect(text).toContain(
      '      gated: it lives under pdns.zones/z, a stateful resource also removed: nothing of it is deleted until that deletion is approved; needs --approve-destroy',
    );
    expect(text).toContain('      gated: stateful resource; needs --approve-destroy');
  });

  it('names the zone in the summary and counts what waits with it', () => {
    expect(text).toContain(
      'Gated (destructive): pdns.zones/z (and 2 resources under it); re-run with --approve-destroy.',
    );
  });
});
