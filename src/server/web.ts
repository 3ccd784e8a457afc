import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Hono } from 'hono';

// The web page of the twin (docs/web.md, decision 0024): one HTML document and the browser modules
// that `tsc -p src/web` compiles into dist/web. They carry no secret and no data (the page asks the
// API for everything with the user's token), so they are served without one, like /healthz.

/** Where the compiled modules are: next to this file in dist/, or dist/web when run from src/. */
function webDir(): string | undefined {
  for (const rel of ['../web/', '../../dist/web/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    try {
      readFileSync(`${dir}main.js`);
      return dir;
    } catch {
      // not there: try the next
    }
  }
  return undefined;
}

/** A module name the page may ask for: letters, digits and dashes, `.js` (no path, no `..`). */
const MODULE = /^[a-z0-9-]+\.js$/;

/** The page's HTML: a shell the modules fill; no external font, script or style. */
export const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tend — the twin</title>
<link rel="stylesheet" href="/ui/style.css">
</head>
<body>
<header>
  <h1>Tend</h1>
  <span id="workspace" data-testid="workspace"></span>
  <span id="counts" data-testid="counts" aria-live="polite"></span>
  <span id="live" data-testid="live" class="live off">offline</span>
  <form id="find" data-testid="find" role="search">
    <input name="address" data-testid="find-input" placeholder="open sb.services/api" aria-label="open a resource by its address">
  </form>
  <nav>
    <button type="button" data-view="graph" data-testid="tab-graph" aria-pressed="true">Graph</button>
    <button type="button" data-view="timeline" data-testid="tab-timeline" aria-pressed="false">Timeline</button>
    <button type="button" data-view="plan" data-testid="tab-plan" aria-pressed="false">Plan</button>
  </nav>
</header>
<form id="login" data-testid="login" hidden>
  <label>API token <input type="password" name="token" data-testid="token-input" autocomplete="off" required></label>
  <button type="submit" data-testid="token-submit">Open</button>
  <p id="login-error" data-testid="login-error" role="alert"></p>
</form>
<p id="notice" data-testid="notice" role="status"></p>
<main>
  <section id="view-graph" data-testid="view-graph">
    <div id="legend" data-testid="legend"></div>
    <div id="graph-scroll"><svg id="graph" data-testid="graph" role="img" aria-label="the twin as a graph"></svg></div>
  </section>
  <section id="view-timeline" data-testid="view-timeline" hidden>
    <form id="filters" data-testid="filters">
      <label>actor <input name="actor" data-testid="filter-actor"></label>
      <label>intent <input name="intent" data-testid="filter-intent"></label>
      <label>motivation <input name="motivation" data-testid="filter-motivation" placeholder="kind or kind:ref"></label>
      <button type="submit" data-testid="filter-apply">Filter</button>
    </form>
    <ol id="timeline" data-testid="timeline"></ol>
  </section>
  <section id="view-plan" data-testid="view-plan" hidden>
    <button type="button" id="plan-now" data-testid="plan-now">Plan now</button>
    <div id="plan" data-testid="plan"></div>
  </section>
  <aside id="panel" data-testid="panel" hidden></aside>
</main>
<script type="module" src="/ui/main.js"></script>
</body>
</html>
`;

/**
 * The page as `tend serve --fleet` serves it (docs/web.md "A fleet"): the same page, marked
 * `data-fleet`, with a workspace selector in the header and the list of the fleet's workspaces.
 */
export const FLEET_PAGE = fleetPage(PAGE);

function fleetPage(page: string): string {
  const parts: [string, string][] = [
    ['<body>', '<body data-fleet="true">'],
    [
      '  <h1>Tend</h1>\n',
      '  <h1>Tend</h1>\n  <label id="picker">workspace <select id="workspace-select" data-testid="workspace-select"></select></label>\n',
    ],
    [
      '<main>\n',
      '<main>\n  <section id="view-workspaces" data-testid="view-workspaces" hidden>\n    <h2>Workspaces of the fleet</h2>\n    <table id="workspaces" data-testid="workspaces"><thead><tr><th>workspace</th><th>held by</th><th>epoch</th><th>last pass</th><th>resources</th></tr></thead><tbody></tbody></table>\n  </section>\n',
    ],
  ];
  let out = page;
  for (const [from, to] of parts) {
    if (!out.includes(from)) throw new Error(`the page has no ${from.trim()} to extend`);
    out = out.replace(from, to);
  }
  return out;
}

/** The page's style: states have a colour and a written word (never colour only). */
export const STYLE = `
:root { font: 14px/1.4 system-ui, sans-serif; color: #1d2330; background: #f6f7f9; }
body { margin: 0; }
header { display: flex; gap: 1em; align-items: center; padding: .5em 1em; background: #1d2330; color: #fff; }
header h1 { font-size: 1.1em; margin: 0; }
header nav { margin-left: auto; display: flex; gap: .3em; }
header nav[hidden] { display: none; }
button { font: inherit; cursor: pointer; }
button[aria-pressed="true"] { font-weight: bold; }
.live.on { color: #7fdc8f; } .live.off { color: #f5a3a3; }
#notice:empty { display: none; } #notice { margin: .5em 1em; color: #8a4b00; }
main { display: flex; gap: 1em; padding: 1em; align-items: flex-start; }
main > section { flex: 1; min-width: 0; }
#graph-scroll { overflow: auto; max-height: 80vh; background: #fff; border: 1px solid #d5d9e0; }
#legend span { margin-right: 1em; }
.swatch { display: inline-block; width: .8em; height: .8em; border-radius: 2px; margin-right: .3em; vertical-align: middle; }
svg text { font-size: 11px; pointer-events: none; }
.group-box { fill: #eef1f5; stroke: #c4cad4; }
.group-title { font-weight: bold; font-size: 12px; }
.collapse { cursor: pointer; fill: #2a4fa8; pointer-events: all; text-decoration: underline; }
.node rect, .group rect { stroke: #445; stroke-width: 1; cursor: pointer; }
.node.selected rect { stroke-width: 3; stroke: #000; }
.node.blast rect, .group.blast rect { stroke: #c01; stroke-width: 3; stroke-dasharray: 4 2; }
.edge { stroke: #8a93a3; stroke-width: 1; fill: none; }
.violation circle { fill: #e8a33d; stroke: #fff; stroke-width: 1; }
.violation.deny circle { fill: #c01; }
.violation text { fill: #fff; font-size: 10px; font-weight: bold; }
.converged { fill: #bfe8c5; background: #bfe8c5; }
.drifted { fill: #ffd27a; background: #ffd27a; }
.pending { fill: #cfd8ff; background: #cfd8ff; }
.failing, .error { fill: #f5a3a3; background: #f5a3a3; }
.blocked { fill: #d9b3ff; background: #d9b3ff; }
.paused { fill: #d0d0d0; background: #d0d0d0; }
aside { flex: 0 0 38%; background: #fff; border: 1px solid #d5d9e0; padding: .5em 1em; max-height: 85vh; overflow: auto; }
table { border-collapse: collapse; width: 100%; }
td, th { border-bottom: 1px solid #e3e6ea; padding: .2em .4em; text-align: left; vertical-align: top; }
tr.drifted td { background: #fff1cc; }
code { font-size: 12px; word-break: break-all; }
.reason { color: #5a3d00; }
#timeline li { margin-bottom: .4em; }
#filters { margin-bottom: .5em; display: flex; gap: .5em; flex-wrap: wrap; }
#view-workspaces table { background: #fff; }
`;

/**
 * Adds the page to the app: `GET /` (the HTML), `GET /ui/style.css` and `GET /ui/<module>.js`.
 * When the modules were not built (a checkout without `npm run build`) `/` says so. `fleet`: the
 * page of `tend serve --fleet`, which picks a workspace first.
 */
export function addWebPage(hono: Hono, options: { readonly fleet?: boolean } = {}): void {
  const page = options.fleet ? FLEET_PAGE : PAGE;
  const dir = webDir();
  const modules = new Map<string, string>();
  const moduleText = (name: string): string | undefined => {
    if (!dir || !MODULE.test(name)) return undefined;
    let text = modules.get(name);
    if (text === undefined) {
      try {
        text = readFileSync(`${dir}${name}`, 'utf8');
      } catch {
        return undefined;
      }
      modules.set(name, text);
    }
    return text;
  };
  const headers = (type: string) => ({
    'content-type': `${type}; charset=utf-8`,
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    'content-security-policy':
      "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
  });
  hono.get('/', (c) => {
    if (!dir) {
      return c.text(
        'the web page is not built: run `npm run build` (it compiles src/web into dist/web)\n',
        503,
      );
    }
    return c.body(page, 200, headers('text/html'));
  });
  hono.get('/ui/style.css', (c) => {
    return c.body(STYLE, 200, headers('text/css'));
  });
  hono.get('/ui/:file', (c) => {
    const text = moduleText(c.req.param('file'));
    if (text === undefined) return c.text('no such file\n', 404);
    return c.body(text, 200, headers('text/javascript'));
  });
}
