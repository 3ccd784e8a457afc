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

describe('renderPlan: write-only fields', () => {
  it('marks them on a create: sent once, never read back', () => {
    const plan = assemblePlan(
      [
        {
          kind: 'create',
          address: 'pdns.zones/z',
          type: 'pdns.zones',
          dependsOn: [],
          desired: { name: 'z.', nameservers: ['ns1.z.'] },
          writeOnly: ['nameservers'],
        },
      ],
      [],
      false,
    );
    const text = renderPlan(plan, PLAIN);
    expect(text).toContain('      name: "z."\n');
    expect(text).toContain(
      '      nameservers: ["ns1.z."]   # write-only: sent on create, never read back',
    );
  });

  it('shows the old value of a write-only field as what it is: not readable', () => {
    const plan = assemblePlan(
      [
        {
          kind: 'replace',
          address: 'pdns.zones/z',
          type: 'pdns.zones',
          dependsOn: [],
          objectId: 'z.',
          changes: [
            {
              path: 'nameservers',
              before: { $writeOnly: 'as sent on create; not readable' },
              after: ['ns2.z.'],
            },
          ],
          forcedBy: ['nameservers'],
          decidedBy: 'annotation',
          reason: 'nameservers cannot change in place: write-only and create-only',
          strategy: 'delete-before-create',
          gated: false,
          blastRadius: [],
        },
      ],
      [],
      false,
    );
    expect(renderPlan(plan, PLAIN)).toContain(
      '      nameservers: (write-only: as sent on create) → ["ns2.z."]   # forces replacement',
    );
  });
});
