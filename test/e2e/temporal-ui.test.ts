/**
 * The official Temporal Web UI of `npm start`'s dev server (docs/operations.md "Watching
 * workflows") in a real headless Chromium (found by configuration,
 * test/support/external-artefacts.ts; pending without one): opened from the URL the start-up
 * table prints, it lists a charge's `charge-<id>` run, narrows the list by MerchantId, shows the
 * run's event history and its call stack, and terminates a run. Screenshots are kept in
 * .test-output/temporal-ui/.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { freePort } from '../../src/db/embedded-postgres';
import { chromiumBrowser, needing } from '../support/external-artefacts';
import { isOurDevServer, readPidFile } from '../../src/temporal/local-server-process';
import { localDbFile, localPidFile } from '../../src/temporal/local-server';

const ROOT = path.resolve(__dirname, '../..');
const SHOTS = path.join(ROOT, '.test-output', 'temporal-ui');
const CHROMIUM = chromiumBrowser();

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('npm start: the Temporal UI in a browser', function () {
  this.timeout(300_000);
  let child: ChildProcess | undefined;
  let output = '';
  let dataDir: string;
  let base: string;
  let ui: string;
  let browser: Browser | undefined;

  const call = async (method: string, p: string, token?: string, body?: unknown) => {
    const res = await fetch(`${base}${p}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const login = async (email: string, password: string): Promise<string> =>
    (await call('POST', '/v1/auth/login', undefined, { email, password })).body.token as string;

  /** A merchant ready to charge, and one charge of its own: ids of both. */
  async function merchantWithCharge(admin: string, n: number): Promise<{ merchantId: string; chargeId: string }> {
    const email = `ui${n}@start.test`;
    const created = await call('POST', '/v1/admin/merchants', admin, {
      name: `Loja UI ${n}`,
      document: ['12345678909', '11222333000181'][n],
      email,
      password: 'merchant-password-9',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const merchantId = (created.body.merchant as { id: string }).id;
    await call('PATCH', `/v1/admin/merchants/${merchantId}`, admin, {
      kycStatus: 'APPROVED',
      acquirerAccountId: `acc-ui-${n}`,
    });
    const key = await call('POST', `/v1/admin/merchants/${merchantId}/pix-keys`, admin, {
      type: 'EMAIL',
      key: `pix${n}@ui.test`,
    });
    await call('PATCH', `/v1/admin/merchants/${merchantId}/pix-keys/${(key.body.pixKey as { id: string }).id}`, admin, {
      status: 'ACTIVE',
    });
    const user = await login(email, 'merchant-password-9');
    const charge = await call('POST', '/v1/charges', user, { amount: 1990 + n, description: `Pedido UI ${n}` });
    assert.equal(charge.status, 201, JSON.stringify(charge.body));
    const chargeId = (charge.body.charge as { id: string }).id;
    if (n === 0) {
      // Paid: its history then holds the payment signal, the activities and the settlement timer.
      assert.equal((await call('POST', `/v1/sandbox/charges/${chargeId}/pay`, user, {})).status, 202);
      await waitFor(
        async () =>
          ((await call('GET', `/v1/charges/${chargeId}`, user)).body.charge as { status: string }).status === 'PAID',
        60_000,
        'the charge PAID',
      );
    }
    return { merchantId, chargeId };
  }

  async function shot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  }

  before(async function () {
    if (!CHROMIUM.path) return;
    fs.mkdirSync(SHOTS, { recursive: true });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-ui-'));
    // Reachable by the `postgres` OS user when run as root, so the cluster stays inside dataDir.
    fs.chmodSync(dataDir, 0o755);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'src/cli/start.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        ADMIN_EMAIL: 'ops@pixflow.test',
        ADMIN_PASSWORD: 'operator-password-1',
        LOG_LEVEL: 'warn',
        // Nothing but the UI acts on the runs this test terminates.
        RECONCILER: 'off',
        SIMULATOR_TRANSFER_DELAY_MS: '100',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    await waitFor(async () => /pixflow is running/.test(output), 120_000, 'the start-up table').catch((err: Error) => {
      throw new Error(`${err.message}; output:\n${output}`);
    });
    const printed = /Temporal UI\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    assert.ok(printed, `the start-up table names the Temporal UI:\n${output}`);
    ui = printed;
    await waitFor(async () => (await fetch(`${ui}/`)).status === 200, 60_000, 'the UI to answer').catch(
      (err: Error) => {
        throw new Error(`${err.message}; output:\n${output}`);
      },
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM.path,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      timeout: 60_000,
    });
  });

  after(async () => {
    await browser?.close();
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    // Ended with npm start; if that was cut short, by its pidfile.
    const devServer = dataDir ? readPidFile(localPidFile(dataDir)) : undefined;
    if (devServer && isOurDevServer(devServer, localDbFile(dataDir))) process.kill(devServer, 'SIGKILL');
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const title = needing(
    CHROMIUM,
    'lists, filters by MerchantId, opens a history and a call stack, and terminates a run, from the printed URL',
  );
  if (!CHROMIUM.path) it(title);
  else
    it(title, async () => {
      const admin = await login('ops@pixflow.test', 'operator-password-1');
      const paid = await merchantWithCharge(admin, 0);
      const open = await merchantWithCharge(admin, 1);
      const paidRun = `charge-${paid.chargeId}`;
      const openRun = `charge-${open.chargeId}`;
      const page = await (browser as Browser).newPage({ viewport: { width: 1440, height: 1000 } });
      const failures: string[] = [];
      page.on('pageerror', (err) => failures.push(err.message));

      // The printed URL opens the default namespace's workflow list, both runs in it.
      await page.goto(ui, { timeout: 60_000 });
      await page.waitForURL(/\/namespaces\/default\/workflows/, { timeout: 60_000 });
      await page.getByText(paidRun, { exact: true }).first().waitFor({ timeout: 60_000 });
      await page.getByText(openRun, { exact: true }).first().waitFor({ timeout: 60_000 });
      await shot(page, '1-workflows');

      // The list filter by MerchantId (the UI keeps it in the page's `query`): only that merchant's run.
      const query = `MerchantId="${paid.merchantId}"`;
      await page.goto(`${ui}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
      await page.getByText(paidRun, { exact: true }).first().waitFor({ timeout: 60_000 });
      // That merchant's runs are its charge and its Pix key's registration; the other's are gone.
      const count = page.locator('[data-testid="workflow-count"]').first();
      await waitFor(async () => (await count.textContent())?.trim() === '2', 30_000, 'the list to count 2 runs');
      assert.equal(await page.getByText(openRun, { exact: true }).count(), 0, 'the other merchant is filtered out');
      await shot(page, '2-filtered-by-merchant');

      // The run's page (it opens on its timeline), then its event history: the payment signal, the
      // activities, the settlement timer.
      await page.getByText(paidRun, { exact: true }).first().click();
      await page.waitForURL(/\/workflows\/charge-[^/]+\/[^/]+\/(history|timeline)/, { timeout: 60_000 });
      const runPath = new URL(page.url()).pathname.replace(/\/(history|timeline)$/, '');
      await page.goto(`${ui}${runPath}/history`);
      for (const event of ['Workflow Execution Signaled', 'Activity Task Completed', 'Timer Started']) {
        await page.getByText(event, { exact: false }).first().waitFor({ timeout: 60_000 });
      }
      await shot(page, '3-history');

      // The call stack tab answers (the worker's __stack_trace query): the workflow's own frames.
      await page.goto(`${ui}${runPath}/call-stack`);
      const stack = page.locator('[data-testid="query-call-stack"]');
      await stack.waitFor({ timeout: 60_000 });
      await waitFor(
        async () => /at \w+ \(.*workflows\/charge\.ts:\d+/.test((await stack.first().textContent()) ?? ''),
        30_000,
        "the call stack naming the workflow's code",
      );
      await shot(page, '4-call-stack');

      // Terminate the unpaid charge's run from its page: it closes as Terminated.
      await page.goto(`${ui}/namespaces/default/workflows/${encodeURIComponent(openRun)}`);
      await page.waitForURL(/\/(history|timeline)/, { timeout: 60_000 });
      await page.getByRole('button', { name: 'More Actions' }).click();
      await page.getByRole('menuitem', { name: /Terminate/ }).click();
      const modal = page.locator('[data-testid="terminate-confirmation-modal"]:visible');
      await modal.waitFor({ timeout: 30_000 });
      await modal.locator('input, textarea').first().fill('closed from the UI by the test');
      await modal.locator('[data-testid="confirm-modal-button"]').click();
      await page.getByText('Terminated', { exact: true }).first().waitFor({ timeout: 60_000 });
      await shot(page, '5-terminated');
      const http = /Temporal HTTP API\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
      const described = (await (
        await fetch(`${http}/api/v1/namespaces/default/workflows/${encodeURIComponent(openRun)}`)
      ).json()) as { workflowExecutionInfo: { status: string } };
      assert.equal(described.workflowExecutionInfo.status, 'WORKFLOW_EXECUTION_STATUS_TERMINATED');
      assert.deepEqual(failures, [], 'no script error on any page');
      await page.close();
    });
});
