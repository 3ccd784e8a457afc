import { describe, expect, it } from 'vitest';
import type { Address } from '../core/index.js';
import { TendError } from '../core/index.js';
import type { EngineEvent } from './events.js';
import { OutcomeBook } from './outcome-book.js';
import type { Phase } from './scheduler.js';
import { Blocked, Skipped, nodeId } from './scheduler.js';

const A = 'sb.volumes/data' as Address;

describe('OutcomeBook.failed', () => {
  const already = new TendError('op.refused', 'already said');
  const cases: {
    name: string;
    reason: string;
    before?: (book: OutcomeBook) => void;
    failures: [Phase, unknown][];
    want: unknown;
    wantEvents: string[];
  }[] = [
    {
      name: 'held back',
      reason: 'a node waiting on a gated one is blocked, saying what it waits for',
      failures: [['step', new Blocked('sb.zones/z', 'which needs --approve-destroy')]],
      want: {
        state: 'blocked',
        message: 'waits for sb.zones/z, which needs --approve-destroy',
        checks: [],
      },
      wantEvents: ['blocked'],
    },
    {
      name: 'stopped at its own gate',
      reason: 'the gate recorded the reason already: being held back never overrides it',
      before: (book) => void book.blocked(A, 'vol-1', 'gated', 'which needs --approve-destroy'),
      failures: [['step', new Blocked(A, 'which needs --approve-destroy')]],
      want: { state: 'blocked', objectId: 'vol-1', message: 'gated', checks: [] },
      wantEvents: [],
    },
    {
      name: 'skipped',
      reason: 'a node whose dependency failed is pending, not attempted',
      failures: [['delete', new Skipped('dependency-failed')]],
      want: {
        state: 'pending',
        message: 'not attempted: a resource it depends on failed',
        checks: [],
      },
      wantEvents: ['skipped'],
    },
    {
      name: 'stopping',
      reason: 'a node not started because tend is stopping says so',
      failures: [['step', new Skipped('stopping')]],
      want: { state: 'pending', message: 'not started: tend is stopping', checks: [] },
      wantEvents: ['skipped'],
    },
    {
      name: 'step 2 fails after step 1',
      reason: 'the error overrides the converged replacement, keeping its object id',
      before: (book) => book.converged(A, 'vol-2'),
      failures: [['delete-replaced', new TendError('op.refused', 'busy')]],
      want: {
        state: 'error',
        objectId: 'vol-2',
        message: 'step 2 of the replace (delete the old object): op.refused: busy',
        checks: [],
      },
      wantEvents: ['error'],
    },
    {
      name: 'finishing an interrupted replace',
      reason: 'the message says which work failed',
      failures: [['finish-replace', new TendError('op.refused', 'busy')]],
      want: {
        state: 'error',
        message: 'finishing an interrupted replace: op.refused: busy',
        checks: [],
      },
      wantEvents: ['error'],
    },
    {
      name: 'first error wins',
      reason: 'a second failed node of the address changes nothing',
      failures: [
        ['step', new TendError('plan.changed', 'first')],
        ['delete-replaced', new TendError('op.refused', 'second')],
      ],
      want: { state: 'error', message: 'plan.changed: first', checks: [] },
      wantEvents: ['error'],
    },
    {
      name: 'already reported',
      reason: 'an error the operator reported is recorded but not reported again',
      failures: [['step', already]],
      want: { state: 'error', message: 'op.refused: already said', checks: [] },
      wantEvents: [],
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, () => {
      const events: EngineEvent[] = [];
      const book = new OutcomeBook((e) => events.push(e));
      c.before?.(book);
      const before = events.length;
      for (const [phase, error] of c.failures) {
        book.failed({ node: nodeId(phase, A), error }, (e) => e === already);
      }
      expect(book.outcomes.get(A)).toEqual(c.want);
      expect(events.slice(before).map((e) => e.kind)).toEqual(c.wantEvents);
    });
  }
});
