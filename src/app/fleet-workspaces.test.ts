import { describe, expect, it } from 'vitest';
import { TendError } from '../core/index.js';
import type { RegisteredWorkspace } from '../store/index.js';
import { selectRegistered } from './fleet-workspaces.js';

// Which workspace a call on a fleet is about (`tend mcp --fleet`, decision 0047): a registered
// directory workspace, else an error that names the registered ones or says why it is not served.

const LOCATION = 'postgres://tend@db/fleet';
const OPTIONS = { listHint: 'the list_workspaces tool', server: 'tend mcp --fleet' };
const dir = (name: string): RegisteredWorkspace => ({
  name,
  source: { kind: 'dir', dir: `/srv/${name}` },
  addedAt: '2026-01-01T00:00:00.000Z',
  addedBy: 'ops@host',
});

function refusal(registered: RegisteredWorkspace[], name: string) {
  try {
    selectRegistered(registered, name, LOCATION, OPTIONS);
  } catch (e) {
    const err = e as TendError;
    expect(err).toBeInstanceOf(TendError);
    return { code: err.code, message: err.message, hint: err.hint };
  }
  throw new Error(`${name} was selected`);
}

describe('selectRegistered', () => {
  it('selects a registered directory workspace in the fleet store', () => {
    expect(selectRegistered([dir('shop'), dir('blog')], 'blog', LOCATION, OPTIONS)).toEqual({
      dir: '/srv/blog',
      store: LOCATION,
      workspace: 'blog',
    });
  });

  it('names the registered workspaces when the name is none of them', () => {
    expect(refusal([dir('shop'), dir('blog')], 'shpo')).toEqual({
      code: 'workspace.not_found',
      message: 'no workspace "shpo" is registered in this fleet; the fleet has 2: blog, shop',
      hint: 'name one of them (the list_workspaces tool lists them)',
    });
  });

  it('names ten of many, and says how many more', () => {
    const many = Array.from({ length: 13 }, (_, i) => dir(`ws-${String(i).padStart(2, '0')}`));
    expect(refusal(many, 'nope').message).toBe(
      'no workspace "nope" is registered in this fleet; the fleet has 13: ws-00, ws-01, ws-02, ws-03, ws-04, ws-05, ws-06, ws-07, ws-08, ws-09 and 3 more',
    );
  });

  it('says how to register one when the fleet has none', () => {
    expect(refusal([], 'shop')).toEqual({
      code: 'workspace.not_found',
      message:
        'no workspace "shop" is registered in this fleet; the fleet has no registered workspace yet',
      hint: 'register one with tend workspace add <name> --dir <path>',
    });
  });

  it('quotes a hostile name instead of printing it raw', () => {
    expect(refusal([dir('shop')], 'x\n<script>').message).toBe(
      'no workspace "x\\n<script>" is registered in this fleet; the fleet has 1: shop',
    );
  });

  it('refuses a git workspace as tend serve --fleet does (same code)', () => {
    const git: RegisteredWorkspace = {
      ...dir('infra'),
      source: { kind: 'git', url: 'https://git.example/infra.git', ref: 'main', path: '.' },
    };
    expect(refusal([git], 'infra')).toMatchObject({
      code: 'workspace.git_not_served',
      message:
        'workspace infra follows a git repository (https://git.example/infra.git); tend mcp --fleet serves directory workspaces only',
    });
  });
});
