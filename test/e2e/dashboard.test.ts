/**
 * The merchants' dashboard in a real headless Chromium (playwright-core, found by
 * test/support/external-artefacts.ts) against `npm start` on embedded defaults: sign in with the
 * keyboard, register a webhook, take a charge whose BR Code pix-utils validates, pay it from the
 * sandbox button and see PAID without reloading, see its delivery with a 200, edit the webhook's
 * events and read them back, read the statement and its CSV, create and delete an API key, defend
 * an infraction with a PDF, withdraw and see the balance fall, pass axe-core on every page, sign out
 * and fall back to sign-in on an expired session.
 * Each step leaves a screenshot in .test-output/dashboard/. Without a Chromium every step is pending.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { hasError, parsePix, PixElementType } from 'pix-utils';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { freePort } from '../../src/db/embedded-postgres';
import { isOurDevServer, readPidFile } from '../../src/temporal/local-server-process';
import { localDbFile, localPidFile } from '../../src/temporal/local-server';
import { chromiumBrowser, needing } from '../support/external-artefacts';
import { startReceiver, type Receiver } from '../support/webhook-receiver';

const ROOT = path.resolve(__dirname, '../..');
const SHOTS = path.join(ROOT, '.test-output/dashboard');
const CHROMIUM = chromiumBrowser();
const ADMIN = { email: 'ops@dashboard.test', password: 'operator-password-1' };
const MERCHANT = { email: 'loja@dashboard.test', password: 'merchant-password-1' };
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');

/** Cents from a page's `R$ 1.234,56`. */
const centsOf = (text: string): number => Number(text.replace(/[^\d,]/g, '').replace(',', ''));

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('merchant dashboard in a browser, against npm start', function () {
  this.timeout(180_000);
  let child: ChildProcess | undefined;
  let dataDir = '';
  let base = '';
  let output = '';
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let receiver: Receiver;
  const foreign: string[] = [];
  const cspViolations: string[] = [];
  let chargeId = '';
  let shot = 0;

  const api = async (method: string, p: string, token?: string, body?: unknown) => {
    const res = await fetch(`${base}${p}`, {
      method,
      headers: {
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, never> };
  };
  const screenshot = (name: string) =>
    page.screenshot({ path: path.join(SHOTS, `${String(++shot).padStart(2, '0')}-${name}.png`), fullPage: true });
  const go = async (hash: string, heading: string | RegExp) => {
    await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  };
  /** Tab until the field named `name` has the focus (keyboard only). */
  const tabTo = async (name: string) => {
    for (let i = 0; i < 40; i++) {
      if ((await page.evaluate('document.activeElement && document.activeElement.name')) === name) return;
      await page.keyboard.press('Tab');
    }
    throw new Error(`Tab never reached ${name}`);
  };

  before(async function () {
    if (!CHROMIUM.path) return;
    fs.rmSync(SHOTS, { recursive: true, force: true });
    fs.mkdirSync(SHOTS, { recursive: true });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-dashboard-'));
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
        ADMIN_EMAIL: ADMIN.email,
        ADMIN_PASSWORD: ADMIN.password,
        TEMPORAL_UI: 'off',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    await until(async () => (await fetch(`${base}/readyz`)).status === 200, 120_000, 'readyz').catch((err: Error) => {
      throw new Error(`${err.message}; output:\n${output}`);
    });

    // The operator sets up a merchant that may take charges, with R$ 100,00 available to withdraw.
    const admin = (await api('POST', '/v1/auth/login', undefined, ADMIN)).body.token as string;
    const created = await api('POST', '/v1/admin/merchants', admin, {
      name: 'Loja Painel',
      document: '11222333000181',
      ...MERCHANT,
    });
    const merchantId = (created.body.merchant as { id: string }).id;
    await api('PATCH', `/v1/admin/merchants/${merchantId}`, admin, {
      kycStatus: 'APPROVED',
      acquirerAccountId: 'acc-dash',
    });
    const key = await api('POST', `/v1/admin/merchants/${merchantId}/pix-keys`, admin, {
      type: 'EMAIL',
      key: 'pix@painel.test',
    });
    await api('PATCH', `/v1/admin/merchants/${merchantId}/pix-keys/${(key.body.pixKey as { id: string }).id}`, admin, {
      status: 'ACTIVE',
    });
    const adjusted = await api('POST', `/v1/admin/merchants/${merchantId}/adjustments`, admin, {
      amount: 10_000,
      reason: 'saldo inicial do teste',
    });
    assert.equal(adjusted.status, 201, JSON.stringify(adjusted.body));

    receiver = await startReceiver();
    browser = await chromium.launch({
      executablePath: CHROMIUM.path,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      timeout: 60_000,
    });
    context = await browser.newContext({
      acceptDownloads: true,
      locale: 'pt-BR',
      viewport: { width: 1200, height: 900 },
    });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    page = await context.newPage();
    page.setDefaultTimeout(30_000);
    page.on('request', (req) => {
      if (!req.url().startsWith(base) && !req.url().startsWith('data:')) foreign.push(req.url());
    });
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
    });
  });

  after(async () => {
    await browser?.close();
    await receiver?.close();
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          child?.kill('SIGKILL');
          resolve();
        }, 20_000);
        child?.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    if (dataDir) {
      const devServer = readPidFile(localPidFile(dataDir));
      if (devServer && isOurDevServer(devServer, localDbFile(dataDir))) process.kill(devServer, 'SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  const step = (title: string, fn: () => Promise<void>): void => {
    if (!CHROMIUM.path) it(needing(CHROMIUM, title));
    else it(title, fn);
  };

  step('signs in with the keyboard only', async () => {
    await page.goto(`${base}/dashboard`);
    await page.locator('input[name=email]').waitFor();
    await screenshot('sign-in');
    await tabTo('email');
    await page.keyboard.type(MERCHANT.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(MERCHANT.password);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Visão geral' }).waitFor();
    await page.getByTestId('available').filter({ hasText: 'R$ 100,00' }).waitFor();
    const cookie = (await context.cookies(`${base}/dashboard`)).find((c) => c.name === 'pixflow_dashboard');
    assert.ok(cookie, 'the session cookie is set');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    assert.equal(await page.evaluate('document.cookie'), '', 'scripts cannot read the session');
    await screenshot('overview');
  });

  step('registers a webhook and shows its secret once', async () => {
    await go('#/webhooks', 'Webhooks');
    await page.locator('input[name=url]').fill(receiver.url('/dashboard'));
    await page.locator('input[name=events][value="charge.paid"]').check();
    await page.getByRole('button', { name: 'Criar webhook' }).click();
    const secret = await page.getByTestId('webhook-secret').inputValue();
    assert.match(secret, /^whsec_/);
    receiver.expect('/dashboard', secret);
    await screenshot('webhook-created');
  });

  step('creates a charge with the keyboard; its QR Code and BR Code validate with pix-utils', async () => {
    await go('#/charges', 'Cobranças');
    await tabTo('amount');
    await page.keyboard.type('29,90');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Pedido do painel');
    await page.keyboard.press('Enter');
    const code = await page.getByTestId('brcode').inputValue();
    const parsed = parsePix(code);
    assert.ok(!hasError(parsed), `${code}: ${JSON.stringify(parsed)}`);
    if (parsed.type === PixElementType.STATIC) assert.equal(Math.round((parsed.transactionAmount ?? 0) * 100), 2990);
    else assert.equal(parsed.type, PixElementType.DYNAMIC);
    // The QR image says the same as the copy-and-paste code.
    const src = (await page.locator('.qr img').getAttribute('src')) ?? '';
    const png = PNG.sync.read(Buffer.from(src.replace(/^data:image\/png;base64,/, ''), 'base64'));
    assert.equal(jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data, code);
    await page.getByRole('button', { name: 'Copiar' }).click();
    await page.getByRole('button', { name: 'Copiado' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), code);
    chargeId = ((await page.getByRole('link', { name: 'Detalhes' }).getAttribute('href')) ?? '').split('/').pop() ?? '';
    assert.match(chargeId, /^ch_/);
    await screenshot('charge-created');
  });

  step('pays it from the sandbox button and shows PAID without reloading', async () => {
    let loads = 0;
    page.on('load', () => loads++);
    await page.getByRole('button', { name: 'Pagar esta cobrança (sandbox)' }).click();
    await page.getByTestId('charge-status').filter({ hasText: 'PAID' }).waitFor({ timeout: 60_000 });
    assert.equal(loads, 0, 'the page was not reloaded');
    await screenshot('charge-paid');
  });

  step("shows the webhook's delivery with a 200", async () => {
    const [delivered] = await receiver.waitFor('/dashboard', 1, 60_000);
    assert.equal(delivered?.body.event, 'charge.paid');
    await go('#/webhooks', 'Webhooks');
    await page.getByRole('button', { name: 'Entregas' }).click();
    await until(
      async () => {
        await page.getByRole('button', { name: 'Atualizar' }).click();
        return (await page.getByTestId('delivery-code').first().textContent({ timeout: 1000 })) === '200';
      },
      30_000,
      'the delivery to show 200',
    );
    await screenshot('webhook-delivery');
  });

  step("edits the webhook's events and reads them back", async () => {
    await go('#/webhooks', 'Webhooks');
    const card = page.locator('li.card').first();
    const event = (name: string) => card.locator(`input[name="edit.events"][value="${name}"]`);
    await card.getByRole('button', { name: 'Editar' }).click();
    assert.equal(await event('charge.paid').isChecked(), true, 'the form starts from the subscribed events');
    assert.equal(await card.locator('input[name="edit.events"]:checked').count(), 1);
    // charge.refunded: no later step refunds, so the receiver sees no more deliveries than before.
    await event('charge.refunded').check();
    await screenshot('webhook-editing');
    await card.getByRole('button', { name: 'Salvar' }).click();
    await card.locator('form').waitFor({ state: 'detached' });
    await card.getByTestId('webhook-events').filter({ hasText: 'charge.paid, charge.refunded' }).waitFor();
    await screenshot('webhook-edited');
    const token = (await api('POST', '/v1/auth/login', undefined, MERCHANT)).body.token as string;
    const listed = (await api('GET', '/v1/webhooks/merchant', token)).body.webhooks as Array<{ events: string[] }>;
    assert.deepEqual(
      listed.map((w) => w.events),
      [['charge.paid', 'charge.refunded']],
    );
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await card.getByRole('button', { name: 'Editar' }).click();
    assert.equal(await event('charge.paid').isChecked(), true);
    assert.equal(await event('charge.refunded').isChecked(), true);
    assert.equal(await card.locator('input[name="edit.events"]:checked').count(), 2);
    await card.getByRole('button', { name: 'Editar' }).click();
  });

  step("shows the statement's lines and downloads its CSV", async () => {
    await go('#/statement', 'Extrato');
    await page.getByTestId('statement').getByRole('cell', { name: 'CHARGE_PAID' }).first().waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Baixar CSV' }).click(),
    ]);
    const csv = fs.readFileSync((await download.path()) ?? '', 'utf8');
    const lines = csv.trim().split(/\r?\n/);
    assert.ok(lines.length >= 3, csv);
    assert.ok(
      lines.some((l) => l.includes('CHARGE_PAID') && l.includes(chargeId)),
      csv,
    );
    assert.ok(
      lines.some((l) => l.includes('ADJUSTMENT')),
      csv,
    );
    await screenshot('statement');
  });

  step('creates an API key (shown once, working) and deletes it', async () => {
    await go('#/api-keys', 'Chaves de API');
    await page.locator('input[name=name]').fill('loja online');
    await page.getByRole('button', { name: 'Criar chave' }).click();
    const value = await page.getByTestId('new-key').inputValue();
    assert.match(value, /^pixflow_/);
    assert.equal((await api('GET', '/v1/merchants/me', value)).status, 200);
    await screenshot('api-key-created');
    await page.getByRole('button', { name: 'Excluir loja online' }).click();
    await page.getByRole('button', { name: 'Excluir loja online' }).waitFor({ state: 'detached' });
    assert.equal((await api('GET', '/v1/merchants/me', value)).status, 401);
    await screenshot('api-key-deleted');
  });

  step('opens an infraction from the sandbox and submits a defense with a PDF', async () => {
    await page.evaluate(`location.hash = '#/charges/${chargeId}'`);
    // The detail shows the payment as the acquirer reported it: the sandbox payer and the booked fee.
    await page.getByTestId('detail-payer').filter({ hasText: 'Pagador Sandbox (12345678909)' }).waitFor();
    assert.match((await page.getByTestId('detail-fee').textContent()) ?? '', /^R\$\s?\d+,\d{2}$/);
    await page.getByRole('button', { name: 'Abrir uma infração (sandbox)' }).click();
    await page.waitForURL(/#\/infractions\/.+/);
    await page.getByTestId('infraction-status').waitFor();
    await page.locator('textarea[name=defense]').fill('O cliente recebeu o produto: segue o comprovante de entrega.');
    await page
      .locator('input[name=files]')
      .setInputFiles({ name: 'comprovante.pdf', mimeType: 'application/pdf', buffer: PDF });
    await page.getByRole('button', { name: 'Enviar defesa' }).click();
    await page.getByTestId('defense').getByRole('link', { name: 'comprovante.pdf' }).waitFor();
    await screenshot('infraction-defended');
    // The infraction's workflow blocks the charge's funds: wait for it, so the next step's balance stays put.
    const token = (await api('POST', '/v1/auth/login', undefined, MERCHANT)).body.token as string;
    await until(
      async () =>
        ((await api('GET', '/v1/merchants/me/balance', token)).body.balance as { blocked: number }).blocked > 0,
      30_000,
      'the infraction to block funds',
    );
  });

  step('withdraws and shows the balance fall', async () => {
    await go('#/withdrawals', 'Saques');
    const before = centsOf((await page.getByTestId('available').textContent()) ?? '');
    assert.ok(before >= 1000, `available ${before}`);
    await page.locator('input[name=amount]').fill('10,00');
    await page.locator('select[name=pixKeyType]').selectOption('EMAIL');
    await page.locator('input[name=pixKey]').fill('destino@example.com');
    await page.getByRole('button', { name: 'Sacar' }).click();
    const after = centsOf((await page.getByTestId('balance-after').textContent()) ?? '');
    assert.equal(after, before - 1000);
    await page
      .getByTestId('available')
      .filter({ hasText: (await page.getByTestId('balance-after').textContent()) ?? '' })
      .waitFor();
    await page.getByTestId('withdrawals').getByRole('cell', { name: 'R$ 10,00' }).first().waitFor();
    await screenshot('withdrawal');
  });

  step('shows an API error as its message next to the field it concerns', async () => {
    await go('#/withdrawals', 'Saques');
    await page.locator('input[name=amount]').fill('10,00');
    await page.locator('select[name=pixKeyType]').selectOption('CPF');
    await page.locator('input[name=pixKey]').fill('123');
    await page.getByRole('button', { name: 'Sacar' }).click();
    const message = await page.locator('.error').first().textContent();
    assert.ok(message && message.length > 5, `an error message is shown: ${message}`);
    await screenshot('withdrawal-error');
  });

  step('passes axe-core with no serious or critical violation on every page, in both languages', async () => {
    const pages: Array<[string, string]> = [
      ['#/overview', 'Visão geral'],
      ['#/charges', 'Cobranças'],
      [`#/charges/${chargeId}`, 'Pedido do painel'],
      ['#/statement', 'Extrato'],
      ['#/withdrawals', 'Saques'],
      ['#/api-keys', 'Chaves de API'],
      ['#/webhooks', 'Webhooks'],
      ['#/infractions', 'Infrações'],
    ];
    const problems: string[] = [];
    const audit = async (label: string) => {
      await page.evaluate(AXE);
      const found = (await page.evaluate(
        'axe.run().then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length })))',
      )) as Array<{ id: string; impact: string | null; nodes: number }>;
      for (const v of found)
        if (v.impact === 'serious' || v.impact === 'critical')
          problems.push(`${label}: ${v.id} (${v.impact}, ${v.nodes} nodes)`);
    };
    for (const [hash, heading] of pages) {
      await go(hash, heading);
      await audit(hash);
    }
    await page.locator('select').filter({ hasText: 'English' }).selectOption('en');
    await go('#/overview', 'Overview');
    await page.getByTestId('available').waitFor();
    assert.match((await page.getByTestId('available').textContent()) ?? '', /^R\$ \d/);
    await audit('overview (en)');
    await screenshot('overview-english');
    await page.locator('select').filter({ hasText: 'English' }).selectOption('pt-BR');
    await page.getByRole('button', { name: 'Sair' }).click();
    await page.locator('input[name=email]').waitFor();
    await audit('sign-in');
    assert.deepEqual(problems, []);
  });

  step('an expired session goes back to sign-in', async () => {
    assert.equal(
      (await context.cookies(`${base}/dashboard`)).find((c) => c.name === 'pixflow_dashboard'),
      undefined,
      'signed out',
    );
    await page.locator('input[name=email]').fill(MERCHANT.email);
    await page.locator('input[name=password]').fill(MERCHANT.password);
    await page.getByRole('button', { name: 'Entrar' }).click();
    await page.getByRole('heading', { level: 1, name: 'Visão geral' }).waitFor();
    await context.clearCookies();
    await page.evaluate("location.hash = '#/charges'");
    await page.getByText('Sua sessão expirou: entre de novo.').waitFor();
    await screenshot('session-expired');
  });

  step('made no third-party request and broke no CSP rule', async () => {
    assert.deepEqual(foreign, []);
    assert.deepEqual(cspViolations, []);
  });
});
