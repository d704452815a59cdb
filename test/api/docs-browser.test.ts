/**
 * GET /docs in a real headless Chromium (Debian's `chromium`, installed when missing by
 * tools/browser/ensure-chromium.sh; driven by playwright-core): the page renders from files the
 * service itself serves (no other host is contacted) and shows every endpoint of the contract.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { startApi, type TestApi } from '../support/api';
import { SPEC_ENDPOINTS } from '../support/spec-endpoints';

const ENSURE_CHROMIUM = path.resolve(__dirname, '../../tools/browser/ensure-chromium.sh');

describe('API reference page in a browser', function () {
  // Installing Chromium on first use can take minutes; every later run finds it at once.
  this.timeout(600_000);
  let api: TestApi;
  let browser: Browser;

  before(async () => {
    const executablePath = execFileSync('sh', [ENSURE_CHROMIUM], { encoding: 'utf8', timeout: 540_000, stdio: ['ignore', 'pipe', 'inherit'] }).trim();
    browser = await chromium.launch({
      executablePath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      timeout: 60_000,
    });
    api = await startApi();
  });
  after(async () => {
    await browser?.close();
    await api?.close();
  });

  it('renders every endpoint of the contract from local files only', async () => {
    const page = await browser.newPage();
    const foreign: string[] = [];
    page.on('request', (req) => {
      if (!req.url().startsWith(api.baseUrl) && !req.url().startsWith('data:')) foreign.push(req.url());
    });
    const res = await page.goto(`${api.baseUrl}/docs`, { timeout: 60_000 });
    assert.equal(res?.status(), 200);
    await page.waitForSelector('.opblock', { timeout: 60_000 });
    const shown = await page.$$eval('.opblock', (blocks) =>
      blocks.map((b) => {
        const method = b.querySelector('.opblock-summary-method')?.textContent?.trim().toLowerCase() ?? '';
        const pathEl = b.querySelector('.opblock-summary-path');
        const p = pathEl?.getAttribute('data-path') ?? pathEl?.textContent?.replace(/\u200b/g, '').trim() ?? '';
        return `${method} ${p}`;
      }),
    );
    for (const [method, p] of SPEC_ENDPOINTS) {
      assert.ok(shown.includes(`${method} ${p}`), `${method.toUpperCase()} ${p} is on the page (saw ${shown.length} operations)`);
    }
    assert.match(await page.title(), /pixflow/);
    assert.deepEqual(foreign, [], 'no request leaves the service');
    await page.close();
  });
});
