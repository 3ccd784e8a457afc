import { describe, expect, it } from 'vitest';
import { TendError } from '../core/index.js';
import { chooseWorkspaceName, derivedWorkspaceName } from './workspace.js';

describe('chooseWorkspaceName', () => {
  const dir = '/srv/checkouts/infra';
  const CASES = [
    {
      reason: 'the flag wins over everything',
      input: { flag: 'ops', env: 'envname', intent: 'prod', store: 'old', dir },
      want: { name: 'ops', source: 'flag' },
    },
    {
      reason: 'TEND_WORKSPACE comes next',
      input: { env: 'envname', intent: 'prod', store: 'old', dir },
      want: { name: 'envname', source: 'env' },
    },
    {
      reason: 'a Workspace document names it',
      input: { intent: 'prod', store: 'old', dir },
      want: { name: 'prod', source: 'intent' },
    },
    {
      reason: 'else the name the store was first used with (a moved folder keeps its objects)',
      input: { store: 'default', dir },
      want: { name: 'default', source: 'store' },
    },
    {
      reason: 'else one derived from the folder',
      input: { dir },
      want: { name: derivedWorkspaceName(dir), source: 'folder' },
    },
    {
      reason: 'an empty flag is no flag',
      input: { flag: '', dir },
      want: { name: derivedWorkspaceName(dir), source: 'folder' },
    },
  ];
  for (const c of CASES) {
    it(c.reason, () => expect(chooseWorkspaceName(c.input)).toEqual(c.want));
  }

  it('refuses an explicit name that cannot go into a tag, saying where it came from', () => {
    expect(() => chooseWorkspaceName({ flag: 'Prod Env', dir })).toThrow(TendError);
    expect(() => chooseWorkspaceName({ env: '../x', dir })).toThrow(
      'workspace name "../x" (from TEND_WORKSPACE) is not valid',
    );
  });
});

describe('derivedWorkspaceName', () => {
  it('is the folder name plus a hash of its path: two folders of one name differ', () => {
    const a = derivedWorkspaceName('/home/a/infra');
    const b = derivedWorkspaceName('/home/b/infra');
    expect(a).toMatch(/^infra-[0-9a-f]{6}$/);
    expect(b).toMatch(/^infra-[0-9a-f]{6}$/);
    expect(a).not.toBe(b);
    expect(derivedWorkspaceName('/home/a/infra')).toBe(a);
  });

  it('makes any folder name a valid workspace name', () => {
    expect(derivedWorkspaceName('/tmp/My Infra (old)!')).toMatch(/^my-infra-old-[0-9a-f]{6}$/);
    expect(derivedWorkspaceName('/tmp/---')).toMatch(/^workspace-[0-9a-f]{6}$/);
  });
});
