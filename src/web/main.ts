// The twin in a web page (docs/web.md): a client of the HTTP API of `tend serve` and nothing else.
// It asks for a bearer token (kept in sessionStorage), draws /graph (with /drift folded in), opens
// /resources/{address} on a click, lists /history with filters, shows /plans/last or POST /plan with
// its blast radius, and follows /events (SSE, read with fetch so the token goes in a header).
// Served by `tend serve --fleet` (the body says data-fleet="true"), it first lists the fleet's
// workspaces (GET /workspaces); the one chosen is in the address (#/workspaces/<name>) and every
// call above goes to /workspaces/<name>/… (docs/web.md "A fleet").
import type { EdgeIn, NodeIn } from './layout.js';
import { layout, NODE_H } from './layout.js';

interface TwinNode {
  address: string;
  type: string;
  state: string;
  message?: string;
  paused: boolean;
  /** Policy rules its observed object breaks (GET /graph), when any. */
  violations?: { count: number; deny: number };
}
interface Graph {
  workspace: { name: string };
  nodes: TwinNode[];
  edges: EdgeIn[];
}
interface Change {
  seq: number;
  time: string;
  actor: string;
  actorKind?: string;
  intent?: string;
  motivation?: { kind: string; ref?: string };
  address: string;
  fields?: string[];
  action?: string;
  decision?: { decision: string; reason?: string; rule?: string };
}
interface FieldReport {
  field: string;
  state: string;
  declared?: { written: unknown; resolved?: unknown };
  observed?: unknown;
  owner: { kind: string; claim?: { actor: string; until?: string } };
  decisionNow?: {
    changedBy: { actor: string; actorKind?: string };
    decision: { decision: string; reason: string; rule?: string };
  };
  entries: Change[];
}
interface Explained {
  address: string;
  observedFrom: string;
  status?: {
    state: string;
    message?: string;
    checks?: { name: string; kind: string; ok: boolean; message: string; at: string }[];
    compliance?: { findings: Finding[] };
  };
  fields: FieldReport[];
  notes: string[];
}
/** A rule the observed object breaks (a status's `compliance.findings`). */
interface Finding {
  policy: string;
  rule: number;
  result: string;
  message: string;
  actions: string[];
  severity: string;
  source: { file: string; line: number; column: number };
  since: string;
  cause?: {
    seq: number;
    actor: string;
    actorKind?: string;
    intent?: string;
    motivation?: { kind: string; ref?: string };
  };
}
interface PlanSteps {
  steps: { address: string; kind: string; reason?: string; blastRadius?: string[] }[];
  blastRadius?: string[];
}
/** A saved plan (GET /plans/…: its steps under `plan`) or a plan made now (POST /plan: the view). */
type Plan = { id?: string; createdAt?: string; destructive?: string[] } & (
  { plan: PlanSteps } | PlanSteps
);

/** A registered workspace of a fleet, as GET /workspaces gives it. */
interface FleetWorkspace {
  name: string;
  holder: { worker: string | null; host: string; pid: number } | null;
  epoch: number | null;
  lastPassAt: string | null;
  states: Record<string, number>;
}

const TOKEN_KEY = 'tend.token';
/** Served by `tend serve --fleet`: the page picks a workspace first. */
const FLEET = document.body.dataset['fleet'] === 'true';
/** Where the workspace's routes are: '' for `tend serve [dir]`, /workspaces/<name> in a fleet. */
let base = '';
const STATES = ['converged', 'drifted', 'pending', 'failing', 'blocked', 'error', 'paused'];
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

let graph: Graph | undefined;
let drifted = new Set<string>();
const expanded = new Set<string>();
let blast = new Set<string>();
let selected: string | undefined;
let refreshTimer: number | undefined;

/** Escapes text for HTML and SVG. */
function esc(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return (s ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

function notice(text: string): void {
  $('notice').textContent = text;
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** One API call with the token; a 401 asks for a token again. */
async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  const token = sessionStorage.getItem(TOKEN_KEY) ?? '';
  const res = await fetch(base + path, {
    ...init,
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.body ? { 'content-type': 'application/json' } : {}),
    },
  });
  const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
  if (!res.ok) {
    const message = body.error?.message ?? `${res.status} ${res.statusText}`;
    if (res.status === 401) askToken(message);
    throw new ApiError(res.status, message);
  }
  return body as T;
}

function askToken(message?: string): void {
  const form = $<HTMLFormElement>('login');
  form.hidden = false;
  $('login-error').textContent = message ?? '';
}

/** What a node shows: paused, or drifted when /drift found a drifted field, else its state. */
function shownState(n: TwinNode): string {
  if (n.paused) return 'paused';
  if (drifted.has(n.address) && (n.state === 'converged' || n.state === 'pending'))
    return 'drifted';
  return n.state;
}

function renderGraph(): void {
  if (!graph) return;
  const nodes: NodeIn[] = graph.nodes.map((n) => ({
    address: n.address,
    type: n.type,
    state: shownState(n),
  }));
  const counts = new Map<string, number>();
  for (const n of nodes) counts.set(n.state, (counts.get(n.state) ?? 0) + 1);
  $('counts').textContent = `${nodes.length} resources: ${[...counts]
    .map(([s, c]) => `${c} ${s}`)
    .join(', ')}`;
  const l = layout(nodes, graph.edges, { expanded });
  const parts: string[] = [];
  for (const e of l.edges) {
    parts.push(
      `<path class="edge" d="M${e.x1},${e.y1} C${e.x1 - 30},${e.y1} ${e.x2 + 30},${e.y2} ${e.x2},${e.y2}" marker-end="url(#arrow)"/>`,
    );
  }
  for (const t of l.types) {
    const blastCount = t.collapsed
      ? graph.nodes.filter((n) => n.type === t.type && blast.has(n.address)).length
      : 0;
    parts.push(
      `<g data-testid="type-${esc(t.type)}"><rect class="group-box" x="${t.x}" y="${t.y}" width="${t.w}" height="${t.h}" rx="6"/>` +
        `<text class="group-title" x="${t.x + 8}" y="${t.y + 15}">${esc(t.type)} (${t.count})${t.hidden ? ` — ${t.hidden} not drawn (open them by address)` : ''}</text>` +
        (expanded.has(t.type)
          ? `<text class="collapse" data-collapse="${esc(t.type)}" data-testid="collapse-${esc(t.type)}" x="${t.x + t.w - 60}" y="${t.y + 15}">collapse</text>`
          : '') +
        `</g>`,
    );
    if (t.collapsed) {
      const worst = STATES.slice(1).find((s) => (t.states[s] ?? 0) > 0) ?? 'converged';
      const lines = Object.entries(t.states).map(([s, c]) => `${c} ${s}`);
      parts.push(
        `<g class="group${blastCount ? ' blast' : ''}" data-type="${esc(t.type)}" data-testid="group-${esc(t.type)}" role="button" tabindex="0" aria-label="${esc(`${t.type}: ${lines.join(', ')}; click to expand`)}">` +
          `<rect class="${worst}" x="${t.x + 10}" y="${t.y + 22}" width="${t.w - 20}" height="${3 * NODE_H}" rx="4"/>` +
          lines
            .slice(0, 5)
            .map((line, i) => `<text x="${t.x + 18}" y="${t.y + 38 + i * 14}">${esc(line)}</text>`)
            .join('') +
          (blastCount
            ? `<text x="${t.x + 18}" y="${t.y + 38 + 5 * 14}">${blastCount} in blast radius</text>`
            : '') +
          `</g>`,
      );
    }
  }
  for (const n of l.nodes) {
    const cls = [
      'node',
      n.address === selected ? 'selected' : '',
      blast.has(n.address) ? 'blast' : '',
    ]
      .filter(Boolean)
      .join(' ');
    parts.push(
      `<g class="${cls}" data-address="${esc(n.address)}" data-testid="node-${esc(n.address)}" data-state="${esc(n.state)}" role="button" tabindex="0" aria-label="${esc(`${n.address}: ${n.state}`)}">` +
        `<rect class="${esc(n.state)}" x="${n.x}" y="${n.y}" width="${n.w}" height="${n.h}" rx="4"/>` +
        `<text x="${n.x + 6}" y="${n.y + 14}">${esc(n.name.length > 22 ? `${n.name.slice(0, 21)}…` : n.name)}</text>` +
        `<text x="${n.x + 6}" y="${n.y + 28}" data-testid="node-state">${esc(n.state)}${blast.has(n.address) ? ' · in plan' : ''}</text>` +
        violationBadge(n) +
        `</g>`,
    );
  }
  const svg = $('graph') as unknown as SVGSVGElement;
  svg.setAttribute('width', String(l.width));
  svg.setAttribute('height', String(l.height));
  svg.innerHTML =
    `<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#8a93a3"/></marker></defs>` +
    parts.join('');
  svg.dataset['rendered'] = String(nodes.length);
}

/** The badge of a node whose observed object breaks policy rules: their number, red with a deny. */
function violationBadge(n: { address: string; x: number; y: number; w: number }): string {
  const v = graph?.nodes.find((g) => g.address === n.address)?.violations;
  if (!v) return '';
  const title = `${v.count} policy violation${v.count === 1 ? '' : 's'}${v.deny ? ` (${v.deny} deny)` : ''}`;
  return (
    `<g class="violation${v.deny ? ' deny' : ''}" data-testid="violation-${esc(n.address)}" aria-label="${esc(title)}"><title>${esc(title)}</title>` +
    `<circle cx="${n.x + n.w - 8}" cy="${n.y + 8}" r="8"/>` +
    `<text x="${n.x + n.w - 8}" y="${n.y + 12}" text-anchor="middle">${v.count}</text></g>`
  );
}

/** How a violation's cause reads, as core `causeText` words it. */
function causeText(c: Finding['cause']): string {
  if (!c) return 'present when Tend first saw the object';
  const why = [
    c.actorKind,
    c.motivation
      ? `${c.motivation.kind}${c.motivation.ref ? `:${c.motivation.ref}` : ''}`
      : undefined,
    c.intent,
  ].filter((x): x is string => x !== undefined);
  return `${c.actor}${why.length > 0 ? ` (${why.join(', ')})` : ''}, ledger entry ${c.seq}`;
}

function renderLegend(): void {
  $('legend').innerHTML = STATES.map(
    (s) => `<span><span class="swatch ${s}"></span>${s}</span>`,
  ).join('');
}

async function loadGraph(): Promise<void> {
  graph = await api<Graph>('/graph');
  $('workspace').textContent = `workspace ${graph.workspace.name}`;
  renderGraph();
}

/** Reads the platform through /drift: a field changed since the last pass shows at once. */
async function loadDrift(): Promise<void> {
  try {
    const d = await api<{ fields: { address: string }[] }>('/drift');
    drifted = new Set(d.fields.map((f) => f.address));
    renderGraph();
  } catch (e) {
    notice(`drift not read: ${(e as Error).message}`);
  }
}

function ownerText(f: FieldReport): string {
  switch (f.owner.kind) {
    case 'intent':
      return 'the intent';
    case 'actor':
      return `${f.owner.claim?.actor ?? 'an actor'}${f.owner.claim?.until ? ` until ${f.owner.claim.until}` : ''}`;
    case 'marker':
      return 'Tend (its marker)';
    default:
      return 'nobody (not declared)';
  }
}

function changeText(c: Change): string {
  const motivation = c.motivation
    ? `${c.motivation.kind}${c.motivation.ref ? `:${c.motivation.ref}` : ''}`
    : '';
  return `#${c.seq} ${c.time} ${c.actor}${c.actorKind ? ` (${c.actorKind})` : ''} ${c.action ?? ''} ${c.fields?.join(', ') ?? ''}${c.intent ? ` — intent ${c.intent}` : ''}${motivation ? `, motivation ${motivation}` : ''}`;
}

async function openPanel(address: string): Promise<void> {
  selected = address;
  renderGraph();
  const panel = $('panel');
  panel.hidden = false;
  panel.dataset['address'] = address;
  let r: Explained;
  try {
    r = await api<Explained>(`/resources/${encodeURIComponent(address)}?limit=5`);
  } catch (e) {
    panel.innerHTML = `<h2>${esc(address)}</h2><p role="alert">${esc((e as Error).message)}</p>`;
    return;
  }
  if (selected !== address) return;
  const node = graph?.nodes.find((n) => n.address === address);
  const state = node ? shownState(node) : (r.status?.state ?? 'unknown');
  const rows = r.fields
    .map(
      (f) =>
        `<tr class="${f.state === 'drifted' ? 'drifted' : ''}" data-testid="field-${esc(f.field)}" data-state="${esc(f.state)}">` +
        `<td><code>${esc(f.field)}</code></td><td><code>${f.declared ? esc(f.declared.written) : ''}</code></td>` +
        `<td><code>${f.observed === undefined ? '' : esc(f.observed)}</code></td><td>${esc(f.state)}</td>` +
        `<td data-testid="owner-${esc(f.field)}">${esc(ownerText(f))}</td></tr>`,
    )
    .join('');
  const decisions = r.fields
    .filter((f) => f.decisionNow)
    .map(
      (f) =>
        `<li data-testid="decision-${esc(f.field)}"><b>${esc(f.field)}</b>: changed by ${esc(f.decisionNow!.changedBy.actor)}; ` +
        `Tend decides <b>${esc(f.decisionNow!.decision.decision)}</b>${f.decisionNow!.decision.rule ? ` (rule ${esc(f.decisionNow!.decision.rule)})` : ''}: ` +
        `<span class="reason" data-testid="decision-reason">${esc(f.decisionNow!.decision.reason)}</span></li>`,
    );
  const entries = new Map<number, Change>();
  for (const f of r.fields) for (const c of f.entries) entries.set(c.seq, c);
  const ledger = [...entries.values()]
    .sort((a, b) => b.seq - a.seq)
    .map(
      (c) =>
        `<li data-testid="entry">${esc(changeText(c))}${c.decision ? `<br>decided <b>${esc(c.decision.decision)}</b>: <span class="reason" data-testid="entry-reason">${esc(c.decision.reason ?? '')}</span>` : ''}</li>`,
    );
  const checks = (r.status?.checks ?? []).map(
    (c) =>
      `<li data-testid="check-${esc(c.name)}">${c.ok ? 'passed' : 'FAILED'} <b>${esc(c.name)}</b> (${esc(c.kind)}, ${esc(c.at)}): ${esc(c.message)}</li>`,
  );
  const violations = (r.status?.compliance?.findings ?? []).map(
    (f) =>
      `<li data-testid="violation-${esc(f.policy)}-${f.rule + 1}"><b>${f.actions.includes('deny') ? 'deny' : f.actions.includes('warn') ? 'warn' : 'audit'}</b> ` +
      `policy <b>${esc(f.policy)}</b> rule ${f.rule + 1} <code>${esc(`${f.source.file}:${f.source.line}:${f.source.column}`)}</code>: ${esc(f.message)}` +
      `<br>introduced by <span data-testid="violation-cause">${esc(causeText(f.cause))}</span>, open since ${esc(f.since)}</li>`,
  );
  panel.innerHTML =
    `<button type="button" data-testid="panel-close" id="panel-close">Close</button>` +
    `<h2 data-testid="panel-address">${esc(address)}</h2>` +
    `<p>state: <b data-testid="panel-state">${esc(state)}</b>${r.status?.message ? ` — ${esc(r.status.message)}` : ''} · observed from ${esc(r.observedFrom)}</p>` +
    `<h3>Fields</h3><table data-testid="fields"><thead><tr><th>field</th><th>declared</th><th>observed</th><th>state</th><th>owner</th></tr></thead><tbody>${rows}</tbody></table>` +
    `<h3>Decisions</h3><ul data-testid="decisions">${decisions.join('') || '<li>nothing drifted: nothing to decide</li>'}</ul>` +
    (violations.length > 0
      ? `<h3>Policy violations</h3><ul data-testid="violations">${violations.join('')}</ul>`
      : '') +
    `<h3>Checks</h3><ul data-testid="checks">${checks.join('') || '<li>none recorded</li>'}</ul>` +
    `<h3>Ledger</h3><ol data-testid="entries">${ledger.join('') || '<li>no entries</li>'}</ol>` +
    r.notes.map((n) => `<p class="note">${esc(n)}</p>`).join('');
  $('panel-close').addEventListener('click', () => {
    selected = undefined;
    panel.hidden = true;
    renderGraph();
  });
}

async function loadTimeline(): Promise<void> {
  const form = $<HTMLFormElement>('filters');
  const q = new URLSearchParams({ limit: '200' });
  for (const name of ['actor', 'intent', 'motivation']) {
    const v = (form.elements.namedItem(name) as HTMLInputElement).value.trim();
    if (v) q.set(name, v);
  }
  const list = $('timeline');
  try {
    const h = await api<{ changes: Change[] }>(`/history?${q.toString()}`);
    list.innerHTML =
      [...h.changes]
        .reverse()
        .map(
          (c) =>
            `<li data-testid="change" data-address="${esc(c.address)}"><a href="#" data-open="${esc(c.address)}">${esc(c.address)}</a> ${esc(changeText(c))}` +
            `${c.decision ? ` — decided <b>${esc(c.decision.decision)}</b>: ${esc(c.decision.reason ?? '')}` : ''}</li>`,
        )
        .join('') || '<li>no change matches</li>';
  } catch (e) {
    list.innerHTML = `<li role="alert">${esc((e as Error).message)}</li>`;
  }
}

/**
 * Shows a plan and marks in the graph what it touches: every resource with a step other than
 * noop, and its blast radius (what is downstream of a replace or a delete, transitively).
 */
function renderPlan(p: Plan | undefined, title: string): void {
  const out = $('plan');
  if (!p) {
    blast = new Set();
    out.innerHTML = `<p>${esc(title)}</p>`;
    renderGraph();
    return;
  }
  const planned = 'plan' in p ? p.plan : p;
  const steps = planned.steps.filter((s) => s.kind !== 'noop');
  const radius = new Set<string>(planned.blastRadius ?? []);
  for (const s of steps) for (const a of s.blastRadius ?? []) radius.add(a);
  blast = new Set([...steps.map((s) => s.address), ...radius]);
  out.innerHTML =
    `<p>${esc(title)}${p.id ? ` <code data-testid="plan-id">${esc(p.id)}</code>` : ''}${p.createdAt ? ` made ${esc(p.createdAt)}` : ''}</p>` +
    `<p data-testid="plan-touches">changes ${steps.length} resource(s)${steps.length ? `: ${esc(steps.map((s) => s.address).join(', '))}` : ''}</p>` +
    `<p data-testid="blast-radius">blast radius (downstream of replaces and deletes): ${radius.size} resource(s)${radius.size ? `: ${esc([...radius].join(', '))}` : ''}</p>` +
    (p.destructive?.length
      ? `<p data-testid="plan-destructive">destructive: ${esc(p.destructive.join(', '))} — applying needs an admin's approval</p>`
      : '') +
    `<ol data-testid="plan-steps">${steps.map((s) => `<li>${esc(s.kind)} ${esc(s.address)}${s.reason ? ` — ${esc(s.reason)}` : ''}</li>`).join('') || '<li>nothing to do</li>'}</ol>` +
    `<p>Marked in the graph with a dashed red border.</p>`;
  renderGraph();
}

async function loadPlan(): Promise<void> {
  try {
    renderPlan(await api<Plan>('/plans/last'), 'last saved plan');
  } catch (e) {
    renderPlan(
      undefined,
      e instanceof ApiError && e.status === 404 ? 'no saved plan yet' : (e as Error).message,
    );
  }
}

async function planNow(): Promise<void> {
  try {
    renderPlan(await api<Plan>('/plan', { method: 'POST', body: '{}' }), 'plan made now');
  } catch (e) {
    renderPlan(undefined, (e as Error).message);
  }
}

function show(view: string): void {
  for (const b of document.querySelectorAll<HTMLButtonElement>('nav button')) {
    b.setAttribute('aria-pressed', String(b.dataset['view'] === view));
  }
  for (const v of ['graph', 'timeline', 'plan']) $(`view-${v}`).hidden = v !== view;
  if (view === 'timeline') void loadTimeline();
  if (view === 'plan') void loadPlan();
}

/**
 * What an event asks of the drift shown: `clear` after a pass (it observed everything: the states
 * it stored are the truth), `read` after an operation outside a pass (read /drift again), else keep.
 */
type DriftRefresh = 'keep' | 'read' | 'clear';
const DRIFT_RANK: Record<DriftRefresh, number> = { keep: 0, read: 1, clear: 2 };
let pendingDrift: DriftRefresh = 'keep';

/** The event kinds that change what the page shows, and what each asks of the drift. */
const REFRESHING = new Map<string, DriftRefresh>([
  ['pass-done', 'clear'],
  ['op-done', 'read'],
  ['op-failed', 'read'],
  ['intent-reloaded', 'read'],
  ['change-observed', 'keep'],
  ['drift', 'keep'],
  ['check', 'keep'],
  ['intent-invalid', 'keep'],
]);

/** After events: the graph, the drift and the open panel again, at most every 300 ms. */
function scheduleRefresh(drift: DriftRefresh): void {
  if (DRIFT_RANK[drift] > DRIFT_RANK[pendingDrift]) pendingDrift = drift;
  if (refreshTimer !== undefined) return;
  refreshTimer = window.setTimeout(() => {
    refreshTimer = undefined;
    const mode = pendingDrift;
    pendingDrift = 'keep';
    if (mode === 'clear') drifted = new Set();
    void loadGraph()
      .then(() => (mode === 'read' ? loadDrift() : undefined))
      .then(() => (selected ? openPanel(selected) : undefined))
      .catch((e: Error) => notice(e.message));
  }, 300);
}

/** Follows /events: SSE parsed from a fetch body (EventSource cannot send the token). */
async function follow(): Promise<void> {
  const live = $('live');
  for (;;) {
    try {
      const res = await fetch(`${base}/events`, {
        headers: { authorization: `Bearer ${sessionStorage.getItem(TOKEN_KEY) ?? ''}` },
      });
      if (!res.ok || !res.body) throw new Error(`events: ${res.status}`);
      live.textContent = 'live';
      live.className = 'live on';
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const kind = /^event: (.*)$/m.exec(block)?.[1];
          const drift = kind ? REFRESHING.get(kind) : undefined;
          if (drift) scheduleRefresh(drift);
          if (kind) live.dataset['last'] = kind;
        }
      }
    } catch {
      // reconnect below
    }
    live.textContent = 'offline (reconnecting)';
    live.className = 'live off';
    await new Promise((r) => setTimeout(r, 2000));
  }
}

async function start(): Promise<void> {
  $('login').hidden = true;
  await loadGraph();
  void loadDrift();
  void follow();
}

/** The workspace the address names (#/workspaces/<name>), if any. */
function chosenWorkspace(): string | undefined {
  const m = /^#\/workspaces\/([^/]+)$/.exec(location.hash);
  if (!m) return undefined;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return undefined;
  }
}

/** The address of a workspace's view. */
function workspaceHash(name: string): string {
  return `#/workspaces/${encodeURIComponent(name)}`;
}

/** A cell of text (names are the fleet's, shown as text, never as HTML). */
function cell(row: HTMLTableRowElement, text: string): HTMLTableCellElement {
  const td = row.insertCell();
  td.textContent = text;
  return td;
}

/** The fleet's workspaces: a table (each name a link to its view) and the header's selector. */
function renderWorkspaces(workspaces: readonly FleetWorkspace[], chosen: string | undefined): void {
  const body = $<HTMLTableElement>('workspaces').tBodies[0]!;
  body.replaceChildren();
  for (const w of workspaces) {
    const row = body.insertRow();
    row.dataset['testid'] = 'workspace-row';
    row.dataset['name'] = w.name;
    const link = document.createElement('a');
    link.href = workspaceHash(w.name);
    link.textContent = w.name;
    cell(row, '').append(link);
    cell(
      row,
      w.holder
        ? `${w.holder.worker ?? 'a worker'} (${w.holder.host}, pid ${w.holder.pid})`
        : 'nobody',
    );
    cell(row, w.epoch === null ? '' : String(w.epoch));
    cell(row, w.lastPassAt ?? 'none yet');
    const states = Object.entries(w.states).map(([state, n]) => `${n} ${state}`);
    cell(row, states.join(', ') || 'no resources yet');
  }
  if (workspaces.length === 0) cell(body.insertRow(), 'no workspace is registered in this fleet');
  const select = $<HTMLSelectElement>('workspace-select');
  const all = new Option('all workspaces', '');
  select.replaceChildren(all, ...workspaces.map((w) => new Option(w.name, w.name)));
  select.value = chosen !== undefined && workspaces.some((w) => w.name === chosen) ? chosen : '';
}

/** Shows the list of the fleet's workspaces instead of one workspace's views. */
function showList(): void {
  $('view-workspaces').hidden = false;
  for (const v of ['graph', 'timeline', 'plan']) $(`view-${v}`).hidden = true;
  document.querySelector<HTMLElement>('header nav')!.hidden = true;
  $('find').hidden = true;
  // The list follows no event stream: it is read when the page opens.
  $('live').hidden = true;
}

/** In a fleet: the workspaces listed, then the one the address names shown (or why not). */
async function startFleet(): Promise<void> {
  $('login').hidden = true;
  const chosen = chosenWorkspace();
  const { workspaces } = await api<{ workspaces: FleetWorkspace[] }>('/workspaces');
  renderWorkspaces(workspaces, chosen);
  if (chosen === undefined || !workspaces.some((w) => w.name === chosen)) {
    if (chosen !== undefined || location.hash.startsWith('#/workspaces/')) {
      notice(
        `no workspace ${JSON.stringify(chosen ?? location.hash.slice('#/workspaces/'.length))} is registered in this fleet: pick one below`,
      );
    }
    showList();
    return;
  }
  base = `/workspaces/${encodeURIComponent(chosen)}`;
  $('view-workspaces').hidden = true;
  await start();
}

function begin(): Promise<void> {
  return FLEET ? startFleet() : start();
}

function main(): void {
  // A token given once in the URL (?token=) is kept for the session and dropped from the address.
  const url = new URL(location.href);
  const given = url.searchParams.get('token');
  if (given) {
    sessionStorage.setItem(TOKEN_KEY, given);
    url.searchParams.delete('token');
    history.replaceState(null, '', url.pathname + url.search + url.hash);
  }
  renderLegend();
  $('login').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const input = $<HTMLFormElement>('login').elements.namedItem('token') as HTMLInputElement;
    sessionStorage.setItem(TOKEN_KEY, input.value.trim());
    input.value = '';
    begin().catch((e: Error) => notice(e.message));
  });
  $('graph').addEventListener('click', (ev) => {
    const target = ev.target as Element;
    const collapse = target.closest('[data-collapse]');
    if (collapse) {
      expanded.delete(collapse.getAttribute('data-collapse') ?? '');
      return renderGraph();
    }
    const node = target.closest('[data-address]');
    if (node) return void openPanel(node.getAttribute('data-address') ?? '');
    const group = target.closest('[data-type]');
    if (group) {
      expanded.add(group.getAttribute('data-type') ?? '');
      renderGraph();
    }
  });
  $('graph').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter')
      (ev.target as HTMLElement).dispatchEvent(new MouseEvent('click', { bubbles: true }));
  });
  $('timeline').addEventListener('click', (ev) => {
    const a = (ev.target as Element).closest('[data-open]');
    if (!a) return;
    ev.preventDefault();
    show('graph');
    void openPanel(a.getAttribute('data-open') ?? '');
  });
  $('filters').addEventListener('submit', (ev) => {
    ev.preventDefault();
    void loadTimeline();
  });
  $('find').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const input = $<HTMLFormElement>('find').elements.namedItem('address') as HTMLInputElement;
    const address = input.value.trim();
    if (address) void openPanel(address);
  });
  $('plan-now').addEventListener('click', () => void planNow());
  for (const b of document.querySelectorAll<HTMLButtonElement>('nav button')) {
    b.addEventListener('click', () => show(b.dataset['view'] ?? 'graph'));
  }
  if (FLEET) {
    $('workspace-select').addEventListener('change', (ev) => {
      const name = (ev.target as HTMLSelectElement).value;
      location.hash = name ? workspaceHash(name) : '#/';
    });
    // Another workspace (a link, the selector, the back button): the page starts again for it.
    window.addEventListener('hashchange', () => location.reload());
  }
  if (!sessionStorage.getItem(TOKEN_KEY)) askToken();
  else begin().catch((e: Error) => notice(e.message));
}

main();
