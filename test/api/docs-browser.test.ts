/**
 * GET /docs in a real headless Chromium (found by configuration, test/support/external-artefacts.ts;
 * driven by playwright-core): the page renders from files the service itself serves (no other host
 * is contacted) and shows every endpoint of the contract. Without a Chromium it is pending.
 */
import assert from 'node:assert/strict';
import { chromium, type Browser } from 'playwright-core';
import { startApi, type TestApi } from '../support/api';
import { API_ENDPOINTS } from '../support/api-endpoints';
import { chromiumBrowser, needing } from '../support/external-artefacts';

const CHROMIUM = chromiumBrowser();

describe('API reference page in a browser', function () {
  this.timeout(120_000);
  let api: TestApi;
  let browser: Browser;

  before(async function () {
    if (!CHROMIUM.path) return;
    browser = await chromium.launch({
      executablePath: CHROMIUM.path,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      timeout: 60_000,
    });
    api = await startApi();
  });
  after(async () => {
    await browser?.close();
    await api?.close();
  });

  const title = needing(CHROMIUM, 'renders every endpoint of the contract from local files only');
  if (!CHROMIUM.path) it(title);
  else
    it(title, async () => {
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
      for (const [method, p] of API_ENDPOINTS) {
        assert.ok(
          shown.includes(`${method} ${p}`),
          `${method.toUpperCase()} ${p} is on the page (saw ${shown.length} operations)`,
        );
      }
      assert.match(await page.title(), /pixflow/);
      assert.deepEqual(foreign, [], 'no request leaves the service');
      await page.close();
    });
});
