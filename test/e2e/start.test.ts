/**
 * `npm start` on a fresh machine: no environment but a temporary DATA_DIR, a port and an admin.
 * The real entry point runs as a child process with embedded PostgreSQL and the official
 * Temporal dev server it spawns (with its Web UI); the test walks the operator → merchant → API
 * key path over HTTP and then checks that SIGTERM drains, ends the dev server and exits 0.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/db/embedded-postgres';
import { startReceiver } from '../support/webhook-receiver';
import { isOurDevServer, readPidFile } from '../../src/temporal/local-server-process';
import { localDbFile, localPidFile, startLocalTemporal } from '../../src/temporal/local-server';
import { createLogger } from '../../src/lib/logger';

const ROOT = path.resolve(__dirname, '../..');

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function json(res: Response): Promise<Record<string, unknown>> {
  return (await res.json()) as Record<string, unknown>;
}

describe('npm start (embedded defaults)', function () {
  this.timeout(120_000);
  let child: ChildProcess;
  let base: string;
  let dataDir: string;
  let output = '';

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-start-'));
    // Reachable by the `postgres` OS user when run as root, so the cluster stays inside dataDir.
    fs.chmodSync(dataDir, 0o755);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_EMAIL: 'ops@pixflow.test',
      ADMIN_PASSWORD: 'operator-password-1',
      LOG_LEVEL: 'warn',
    };
    child = spawn(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'src/cli/start.ts'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, 60_000, 'readyz').catch((err: Error) => {
      throw new Error(`${err.message}; output:\n${output}`);
    });
  });

  after(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    // The dev server outlives a SIGKILLed npm start: end it by its pidfile.
    const devServer = readPidFile(localPidFile(dataDir));
    if (devServer && isOurDevServer(devServer, localDbFile(dataDir))) process.kill(devServer, 'SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers healthz and readyz with 200', async () => {
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    const ready = await fetch(`${base}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual((await json(ready)).checks, { database: 'ok', temporal: 'ok' });
    assert.match(output, /pixflow is running/);
    // Each start-up step was announced (on stderr) as it began, in order.
    const steps = ['database:', 'migrations:', 'Temporal:', 'acquirer:', 'workflows: bundling', 'worker:', 'API:'];
    const at = steps.map((step) => output.search(new RegExp(`^\\[pixflow \\+\\d+\\.\\ds\\] ${step}`, 'm')));
    assert.ok(
      at.every((i, n) => i >= 0 && (n === 0 || i > (at[n - 1] ?? -1))),
      `steps in order: ${JSON.stringify(at)}\n${output}`,
    );
  });

  it('runs `temporal server start-dev` and names it and its Web UI, which answers, in the table', async () => {
    assert.match(output, /Temporal\s+127\.0\.0\.1:\d+ \(official dev server, temporal CLI 1\.9\.1\)/);
    const ui = /Temporal UI\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    assert.ok(ui, `the table names the Temporal UI:\n${output}`);
    const page = await fetch(ui);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<html/i);
    // What `ps` shows: the pid npm start wrote runs the official binary's dev server on our database.
    const pid = readPidFile(localPidFile(dataDir));
    assert.ok(pid, 'a pidfile under DATA_DIR/temporal');
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    assert.equal(path.basename(cmdline[0] ?? ''), 'temporal');
    assert.deepEqual(cmdline.slice(1, 3), ['server', 'start-dev']);
    assert.ok(isOurDevServer(pid, localDbFile(dataDir)));
  });

  it('keeps its dev server when a second start on the same DATA_DIR asks for it', async () => {
    const pid = readPidFile(localPidFile(dataDir));
    await assert.rejects(
      startLocalTemporal({ dataDir, logger: createLogger({ level: 'silent' }), ui: false }),
      /another npm start \(pid \d+\) runs the Temporal dev server of/,
    );
    assert.ok(pid && isOurDevServer(pid, localDbFile(dataDir)), 'still running');
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
  });

  it("prints its dev server's HTTP API, which answers, and writes its address for the ops CLI", async () => {
    const http = /Temporal HTTP API\s+\|?\s*(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    assert.ok(http, `the startup table names the HTTP API:\n${output}`);
    const namespaces = await json(await fetch(`${http}/api/v1/namespaces`));
    assert.ok(JSON.stringify(namespaces).includes('"default"'), JSON.stringify(namespaces));
    const address = fs.readFileSync(path.join(dataDir, 'temporal', 'address'), 'utf8').trim();
    assert.match(output, new RegExp(address.replace(/\./g, '\\.')));
  });

  it('lets the bootstrapped admin create a merchant whose user creates a working API key', async () => {
    const post = (p: string, body: unknown, token?: string) =>
      fetch(`${base}${p}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });
    const adminLogin = await post('/v1/auth/login', { email: 'ops@pixflow.test', password: 'operator-password-1' });
    assert.equal(adminLogin.status, 200);
    const adminToken = (await json(adminLogin)).token as string;
    const created = await post(
      '/v1/admin/merchants',
      { name: 'Loja Start', document: '11222333000181', email: 'loja@start.test', password: 'merchant-password-1' },
      adminToken,
    );
    assert.equal(created.status, 201);
    const login = await post('/v1/auth/login', { email: 'loja@start.test', password: 'merchant-password-1' });
    assert.equal(login.status, 200);
    const userToken = (await json(login)).token as string;
    const key = await post('/v1/api-keys', { name: 'server' }, userToken);
    assert.equal(key.status, 201);
    const value = ((await json(key)).apiKey as { value: string }).value;
    const list = await fetch(`${base}/v1/api-keys`, { headers: { authorization: `Bearer ${value}` } });
    assert.equal(list.status, 200);
    assert.equal(((await json(list)).apiKeys as unknown[]).length, 1);
  });

  it('takes a charge from creation to PAID through the in-process acquirer simulator and the worker', async () => {
    const call = async (method: string, p: string, token: string, body?: unknown) => {
      const res = await fetch(`${base}${p}`, {
        method,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await json(res) };
    };
    const login = async (email: string, password: string) =>
      (await (
        await fetch(`${base}/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email, password }),
        })
      ).json()) as { token: string };
    const admin = (await login('ops@pixflow.test', 'operator-password-1')).token;
    const created = await call('POST', '/v1/admin/merchants', admin, {
      name: 'Loja Charge',
      document: '12345678909',
      email: 'charge@start.test',
      password: 'merchant-password-2',
    });
    const merchantId = (created.body.merchant as { id: string }).id;
    await call('PATCH', `/v1/admin/merchants/${merchantId}`, admin, {
      kycStatus: 'APPROVED',
      acquirerAccountId: 'acc-e2e',
    });
    const key = await call('POST', `/v1/admin/merchants/${merchantId}/pix-keys`, admin, {
      type: 'EMAIL',
      key: 'pix@charge.test',
    });
    await call('PATCH', `/v1/admin/merchants/${merchantId}/pix-keys/${(key.body.pixKey as { id: string }).id}`, admin, {
      status: 'ACTIVE',
    });
    const user = (await login('charge@start.test', 'merchant-password-2')).token;
    const charge = await call('POST', '/v1/charges', user, { amount: 2990, description: 'Pedido e2e' });
    assert.equal(charge.status, 201, JSON.stringify(charge.body));
    const id = (charge.body.charge as { id: string }).id;
    assert.equal((await call('POST', `/v1/sandbox/charges/${id}/pay`, user, {})).status, 202);
    await waitFor(
      async () =>
        (await call('GET', `/v1/charges/${id}`, user)).body.charge !== undefined &&
        ((await call('GET', `/v1/charges/${id}`, user)).body.charge as { status: string }).status === 'PAID',
      30_000,
      'PAID',
    );
    const balance = await call('GET', '/v1/merchants/me/balance', user);
    assert.deepEqual(balance.body.balance, { available: 0, pending: 2960, blocked: 0, total: 2960 });
  });

  it('delivers charge.paid to a registered webhook, signed, through the API and worker it started', async () => {
    const receiver = await startReceiver();
    try {
      const call = async (method: string, p: string, token: string, body?: unknown) => {
        const res = await fetch(`${base}${p}`, {
          method,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: await json(res) };
      };
      const login = async (email: string, password: string) =>
        (
          (await (
            await fetch(`${base}/v1/auth/login`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ email, password }),
            })
          ).json()) as { token: string }
        ).token;
      const admin = await login('ops@pixflow.test', 'operator-password-1');
      const created = await call('POST', '/v1/admin/merchants', admin, {
        name: 'Loja Webhook',
        document: '52998224725',
        email: 'webhook@start.test',
        password: 'merchant-password-3',
      });
      const merchantId = (created.body.merchant as { id: string }).id;
      await call('PATCH', `/v1/admin/merchants/${merchantId}`, admin, {
        kycStatus: 'APPROVED',
        acquirerAccountId: 'acc-e2e-wh',
      });
      const key = await call('POST', `/v1/admin/merchants/${merchantId}/pix-keys`, admin, {
        type: 'EMAIL',
        key: 'pix@webhook.test',
      });
      await call(
        'PATCH',
        `/v1/admin/merchants/${merchantId}/pix-keys/${(key.body.pixKey as { id: string }).id}`,
        admin,
        { status: 'ACTIVE' },
      );
      const user = await login('webhook@start.test', 'merchant-password-3');
      const hook = await call('POST', '/v1/webhooks/merchant', user, {
        url: receiver.url('/e2e'),
        events: ['charge.paid'],
      });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      receiver.expect('/e2e', (hook.body.webhook as { secret: string }).secret);
      const charge = await call('POST', '/v1/charges', user, { amount: 1500, description: 'Pedido webhook' });
      const id = (charge.body.charge as { id: string }).id;
      assert.equal((await call('POST', `/v1/sandbox/charges/${id}/pay`, user, {})).status, 202);
      const [delivered] = await receiver.waitFor('/e2e', 1, 30_000);
      assert.equal(delivered?.signatureValid, true);
      assert.equal(delivered?.body.event, 'charge.paid');
      assert.equal(delivered?.body.data.chargeId, id);
    } finally {
      await receiver.close();
    }
  });

  it('drains, ends its dev server and exits 0 on SIGTERM', async () => {
    const devServer = readPidFile(localPidFile(dataDir));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.ok(devServer && !isOurDevServer(devServer, localDbFile(dataDir)), 'the dev server ended');
    assert.equal(fs.existsSync(localPidFile(dataDir)), false, 'its pidfile removed');
    assert.equal(fs.existsSync(path.join(dataDir, 'temporal', 'address')), false, 'no stale address for the ops CLI');
  });
});
