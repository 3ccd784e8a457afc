import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Served } from '../support/browser.js';
import {
  artifactsDir,
  chromiumMissing,
  launchChromium,
  snap,
  startServe,
} from '../support/browser.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { startSandboxInProcess } from '../support/sandbox-process.js';

// The page with a 10,000-resource twin (issue 15, "What it must show"): 50 networks, 4,950 services
// that reference them and 5,000 buckets, served by `tend serve --no-loop` (never applied: every
// resource is pending). Measured in chromium: the time from opening the page to the graph drawn, and
// from a click on a resource (after expanding its type) to its panel. The bounds are generous (a
// shared machine); the figures are printed.

const NETWORKS = 50;
const SERVICES = 4950;
const BUCKETS = 5000;
const TOTAL = NETWORKS + SERVICES + BUCKETS;
const TOKEN = 'viewer-web-scale-token-0123456789';
const missing = chromiumMissing();

function writeIntent(dir: string, url: string): void {
  writeFileSync(
    join(dir, 'provider.yaml'),
    `kind: Provider\nname: sb\ntype: openapi\nspec: ${url}/openapi.json\nendpoint: ${url}\n`,
  );
  const docs: string[] = [];
  for (let i = 0; i < NETWORKS; i++) {
    docs.push(
      `kind: Resource\ntype: sb.networks\nname: n${i}\nspec: { name: n${i}, cidr: 10.${i}.0.0/16 }\n`,
    );
  }
  for (let i = 0; i < SERVICES; i++) {
    docs.push(
      `kind: Resource\ntype: sb.services\nname: s${i}\nspec: { name: s${i}, image: "nginx:1.27", replicas: 2, network_id: "\${sb.networks/n${i % NETWORKS}.id}" }\n`,
    );
  }
  writeFileSync(join(dir, 'services.yaml'), docs.join('---\n'));
  const buckets: string[] = [];
  for (let i = 0; i < BUCKETS; i++) {
    buckets.push(
      `kind: Resource\ntype: sb.buckets\nname: b${i}\nspec: { name: bucket-${i}, versioning: true }\n`,
    );
  }
  writeFileSync(join(dir, 'buckets.yaml'), buckets.join('---\n'));
}

let sandbox: SandboxHandle;
let dir: string;
let served: Served;
let browser: Browser;
let page: Page;
const shots = artifactsDir('web-scale');

describe.skipIf(missing !== undefined)(
  `the page with a 10,000-resource twin${missing ? ` (skipped: ${missing})` : ''}`,
  { timeout: 180_000 },
  () => {
    beforeAll(async () => {
      sandbox = await startSandboxInProcess({ port: 0 });
      dir = mkdtempSync(join(tmpdir(), 'tend-web-scale-'));
      writeIntent(dir, sandbox.url);
      served = await startServe(dir, ['--no-loop'], {
        TEND_API_TOKENS: JSON.stringify([{ token: TOKEN, role: 'viewer', name: 'scale' }]),
      });
      // The intent is read once before the clock starts (what a running server has done already).
      const warm = await fetch(`${served.url}/graph`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(warm.status).toBe(200);
      browser = await launchChromium();
      page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    }, 150_000);

    afterAll(async () => {
      await browser?.close();
      await served?.stop();
      await sandbox?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('draws the graph in under 5 s, each large type as a group with its counts', async () => {
      const t0 = performance.now();
      await page.goto(`${served.url}/?token=${TOKEN}`);
      await page.locator(`#graph[data-rendered="${TOTAL}"]`).waitFor({ timeout: 30_000 });
      const firstRender = performance.now() - t0;
      console.log(`10,000-resource twin: first render ${firstRender.toFixed(0)} ms`);
      expect(await page.getByTestId('counts').textContent()).toBe(
        `${TOTAL} resources: ${TOTAL} pending`,
      );
      const buckets = page.getByTestId('group-sb.buckets');
      expect(await buckets.getAttribute('aria-label')).toBe(
        `sb.buckets: ${BUCKETS} pending; click to expand`,
      );
      // Collapsed: three group nodes (every type is over 30 resources), not 10,000 shapes.
      expect(await page.locator('#graph [data-address]').count()).toBe(0);
      expect(await page.locator('#graph [data-type]').count()).toBe(3);
      await snap(page, shots, '1-collapsed');
      expect(firstRender).toBeLessThan(5_000);
    });

    it('expands a type and opens a resource in under 2 s', async () => {
      const t0 = performance.now();
      await page.getByTestId('group-sb.services').click();
      const node = page.getByTestId('node-sb.services/s7');
      await node.waitFor();
      const expanded = performance.now() - t0;
      const t1 = performance.now();
      await node.click();
      await page.getByTestId('field-replicas').waitFor({ timeout: 30_000 });
      const opened = performance.now() - t1;
      console.log(
        `10,000-resource twin: expand ${expanded.toFixed(0)} ms, open a resource ${opened.toFixed(0)} ms`,
      );
      expect(await page.getByTestId('panel-address').textContent()).toBe('sb.services/s7');
      expect(await page.getByTestId('field-replicas').getAttribute('data-state')).toBe('absent');
      await snap(page, shots, '2-expanded-and-open');
      expect(expanded).toBeLessThan(2_000);
      expect(opened).toBeLessThan(2_000);
    });

    it('opens a resource that is not drawn by its address, and says when there is none', async () => {
      await page.getByTestId('find-input').fill('sb.buckets/b4999');
      await page.getByTestId('find-input').press('Enter');
      await expect
        .poll(() => page.getByTestId('panel-address').textContent())
        .toBe('sb.buckets/b4999');
      expect(await page.getByTestId('field-versioning').getAttribute('data-state')).toBe('absent');
      await page.getByTestId('find-input').fill('sb.buckets/nope');
      await page.getByTestId('find-input').press('Enter');
      await expect
        .poll(() => page.locator('#panel [role=alert]').textContent())
        .toContain('sb.buckets/nope');
      await snap(page, shots, '3-not-found');
    });

    it("tells a viewer that planning needs an operator's token", async () => {
      await page.getByTestId('tab-plan').click();
      await expect.poll(() => page.getByTestId('plan').textContent()).toBe('no saved plan yet');
      await page.getByTestId('plan-now').click();
      await expect
        .poll(() => page.getByTestId('plan').textContent())
        .toBe('POST /plan needs the operator role; scale is viewer');
    });
  },
);
