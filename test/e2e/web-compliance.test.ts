import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultStorePath } from '../../src/app/workspace.js';
import { openSqliteStore } from '../../src/store/index.js';
import type { Served } from '../support/browser.js';
import {
  artifactsDir,
  chromiumMissing,
  launchChromium,
  snap,
  startServe,
} from '../support/browser.js';
import { copyExample, runCli } from '../support/cli.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { startSandboxInProcess } from '../support/sandbox-process.js';

// The web page shows policy violations (issue 28, item 4): the quickstart applied, then the bucket's
// status carries a broken deny rule with the change that introduced it, as a pass writes it; `tend
// serve --no-loop` serves it. The bucket's node wears a violation badge, the other nodes none, and
// its panel names the rule, where it is written, its message and the change that introduced it. A
// screenshot is kept under test-artifacts/web-compliance/. Build first (`npm run build`).

const PASSWORD = 'web-compliance-admin-password';
const ADMIN = 'admin-web-compliance-token-0123456789abcdef';
const missing = chromiumMissing();

let sandbox: SandboxHandle;
let ex: ReturnType<typeof copyExample>;
let served: Served;
let browser: Browser;
let page: Page;
const shots = artifactsDir('web-compliance');

describe.skipIf(missing !== undefined)(
  `policy violations on the web page${missing ? ` (skipped: ${missing})` : ''}`,
  { timeout: 120_000 },
  () => {
    beforeAll(async () => {
      sandbox = await startSandboxInProcess({ port: 0 });
      ex = copyExample('quickstart', sandbox.url);
      const env = { QUICKSTART_ADMIN_PASSWORD: PASSWORD };
      const applied = await runCli(['apply', ex.dir, '--yes'], { env });
      expect(applied.code, applied.stderr).toBe(0);
      const store = await openSqliteStore(defaultStorePath(ex.dir));
      const bucket = (await store.listStatus()).find((s) => s.address === 'sb.buckets/assets')!;
      await store.putStatus({
        ...bucket,
        compliance: {
          key: 'k',
          evaluatedAt: bucket.updatedAt,
          passed: 0,
          undecidable: 0,
          findings: [
            {
              policy: 'buckets-keep-versioning',
              rule: 0,
              result: 'fail',
              message: 'buckets keep versioning on',
              reason: 'Invalid',
              actions: ['deny'],
              severity: 'high',
              fields: ['versioning'],
              source: { file: 'policies.yaml', line: 9, column: 7 },
              since: bucket.updatedAt,
              cause: {
                seq: 12,
                time: bucket.updatedAt,
                actor: 'alice',
                actorKind: 'human',
                motivation: { kind: 'incident', ref: 'INC-9' },
                source: 'audit',
              },
            },
          ],
        },
      });
      await store.close();
      served = await startServe(ex.dir, ['--no-loop'], {
        ...env,
        TEND_API_TOKENS: JSON.stringify([{ token: ADMIN, role: 'admin', name: 'browser' }]),
      });
      browser = await launchChromium();
      page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    }, 90_000);

    afterAll(async () => {
      await browser?.close();
      await served?.stop();
      await sandbox?.stop();
      ex?.cleanup();
    });

    it('marks the node of a resource with open violations, and no other', async () => {
      await page.goto(`${served.url}/?token=${ADMIN}`);
      const badge = page.getByTestId('violation-sb.buckets/assets');
      await badge.waitFor({ timeout: 20_000 });
      expect(await badge.getAttribute('class')).toBe('violation deny');
      expect(await badge.getAttribute('aria-label')).toBe('1 policy violation (1 deny)');
      expect(await badge.textContent()).toContain('1');
      expect(await page.locator('g.violation').count()).toBe(1);
      await snap(page, shots, '1-graph-badge');
    });

    it('shows the rule, its message and the change that introduced it in the panel', async () => {
      await page.getByTestId('node-sb.buckets/assets').click();
      const v = page.getByTestId('violation-buckets-keep-versioning-1');
      await v.waitFor();
      const text = await v.textContent();
      expect(text).toContain('deny policy buckets-keep-versioning rule 1 policies.yaml:9:7');
      expect(text).toContain('buckets keep versioning on');
      expect(await page.getByTestId('violation-cause').textContent()).toBe(
        'alice (human, incident:INC-9), ledger entry 12',
      );
      await snap(page, shots, '2-panel-violation');
    });
  },
);
