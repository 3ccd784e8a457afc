import { describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import { addWebPage, FLEET_PAGE, PAGE } from './web.js';

// The page's files as `tend serve` serves them (docs/web.md): without a token (they carry no data),
// with a content security policy that allows nothing from elsewhere, and nothing outside dist/web.
// The modules are read from dist/web: build first (`npm run build`).

const hono = new Hono();
addWebPage(hono);
const get = (path: string) => hono.request(`http://127.0.0.1${path}`);

describe('the web page', () => {
  it('serves the HTML at / without a token, with a strict content security policy', async () => {
    const r = await get('/');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(r.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await r.text()).toBe(PAGE);
  });

  it('names no external font, script or style', () => {
    expect(PAGE).not.toMatch(/https?:\/\//);
  });

  it.each([
    ['/ui/main.js', 'text/javascript; charset=utf-8'],
    ['/ui/layout.js', 'text/javascript; charset=utf-8'],
    ['/ui/style.css', 'text/css; charset=utf-8'],
  ])('serves %s as %s', async (path, type) => {
    const r = await get(path);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe(type);
  });

  it.each([
    ['a module that does not exist', '/ui/nothing.js'],
    ['a path out of the folder', '/ui/..%2F..%2Fpackage.json'],
    ['a file that is not a module', '/ui/main.js.map'],
    ['an upper-case name', '/ui/MAIN.js'],
  ])('answers 404 for %s', async (_what, path) => {
    const r = await get(path);
    expect(r.status).toBe(404);
    expect(await r.text()).toBe('no such file\n');
  });
});

// `tend serve --fleet` (docs/web.md "A fleet"): the same page marked data-fleet, with a workspace
// selector and the list of the fleet's workspaces; `tend serve [dir]` keeps the page without them.
describe('the web page of a fleet', () => {
  const fleet = new Hono();
  addWebPage(fleet, { fleet: true });

  it('serves the fleet page at / with the same content security policy', async () => {
    const r = await fleet.request('http://127.0.0.1/');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-security-policy')).toBe(
      (await get('/')).headers.get('content-security-policy'),
    );
    const html = await r.text();
    expect(html).toBe(FLEET_PAGE);
    expect(html).toContain('<body data-fleet="true">');
    expect(html).toContain('data-testid="workspace-select"');
    expect(html).toContain('data-testid="view-workspaces"');
    expect(html).not.toMatch(/https?:\/\/|<script>|\son[a-z]+=/);
  });

  it('keeps the single-workspace page without a selector', () => {
    expect(PAGE).not.toContain('data-fleet');
    expect(PAGE).not.toContain('workspace-select');
    expect(PAGE).not.toContain('view-workspaces');
    // The fleet page is the same page with those three additions and nothing else.
    const removed = FLEET_PAGE.replace(' data-fleet="true"', '')
      .replace(/ {2}<label id="picker">.*<\/label>\n/, '')
      .replace(/ {2}<section id="view-workspaces"[\s\S]*?<\/section>\n/, '');
    expect(removed).toBe(PAGE);
  });
});
