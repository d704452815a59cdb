/**
 * `npm start` killed with SIGKILL and started again on the same DATA_DIR: a charge workflow begun
 * before the kill (paid, sleeping until its settlement time) finishes after the restart, and an
 * unpaid one still runs. The charge reconciler is OFF (`RECONCILER=off`) in both runs, so nothing
 * restarts the workflows: they survive only because the official dev server keeps its state in
 * SQLite under DATA_DIR. The second start ends the dev server the killed one left running.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/db/embedded-postgres';
import { relocatedHome, runtimeRoot } from '../../src/db/postgres-runtime-paths';
import { isOurDevServer, readPidFile } from '../../src/temporal/local-server-process';
import { localDbFile, localPidFile } from '../../src/temporal/local-server';

const ROOT = path.resolve(__dirname, '../..');

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface Run {
  child: ChildProcess;
  output: string[];
}

describe('npm start: a charge workflow survives SIGKILL and a restart (reconciler off)', function () {
  this.timeout(180_000);
  let dataDir: string;
  let base: string;
  let env: NodeJS.ProcessEnv;
  const runs: Run[] = [];

  async function start(): Promise<Run> {
    // One process (no tsx CLI wrapper), so SIGKILL hits the server itself.
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/start.ts'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run: Run = { child, output: [] };
    child.stdout?.on('data', (d: Buffer) => run.output.push(d.toString()));
    child.stderr?.on('data', (d: Buffer) => run.output.push(d.toString()));
    runs.push(run);
    await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, 90_000, 'readyz').catch((err: Error) => {
      throw new Error(`${err.message}; output:\n${run.output.join('')}`);
    });
    return run;
  }

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-restart-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      // The browser test opens the UI; here the HTTP API answers the same questions.
      TEMPORAL_UI: 'off',
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_EMAIL: 'ops@pixflow.test',
      ADMIN_PASSWORD: 'operator-password-1',
      LOG_LEVEL: 'warn',
      // The point of the test: no reconciler to restart lost workflows.
      RECONCILER: 'off',
      DEFAULT_SETTLEMENT_DELAY_SECONDS: '8',
      SIMULATOR_TRANSFER_DELAY_MS: '100',
    };
  });

  after(async () => {
    for (const r of runs) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
    // A dev server a failed run left behind (its pidfile names it).
    const devServer = readPidFile(localPidFile(dataDir));
    if (devServer && isOurDevServer(devServer, localDbFile(dataDir))) process.kill(devServer, 'SIGKILL');
    // The first run was killed, so its embedded PostgreSQL outlived it (the second run shared it).
    // From a private (0700) checkout its cluster lives relocated under /var/tmp
    // (docs/production.md "The embedded PostgreSQL"): stop it there too, and remove that copy with the test's data.
    const home = relocatedHome(path.join(dataDir, 'postgres'), runtimeRoot());
    for (const pidFile of [
      path.join(dataDir, 'postgres', 'postmaster.pid'),
      path.join(home, 'postgres', 'postmaster.pid'),
    ]) {
      if (!fs.existsSync(pidFile)) continue;
      const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
      if (pid > 0) {
        try {
          process.kill(pid, 'SIGINT');
          await waitFor(async () => !fs.existsSync(pidFile), 20_000, 'postgres stopped');
        } catch {
          // already gone
        }
      }
    }
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('settles a charge paid before the kill, with no reconciler', async () => {
    const call = async (method: string, p: string, token: string, body?: unknown) => {
      const res = await fetch(`${base}${p}`, {
        method,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const login = async (email: string, password: string): Promise<string> => {
      const res = await fetch(`${base}/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      return ((await res.json()) as { token: string }).token;
    };

    const first = await start();
    const admin = await login('ops@pixflow.test', 'operator-password-1');
    const created = await call('POST', '/v1/admin/merchants', admin, {
      name: 'Loja Restart',
      document: '12345678909',
      email: 'restart@start.test',
      password: 'merchant-password-3',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const merchantId = (created.body.merchant as { id: string }).id;
    await call('PATCH', `/v1/admin/merchants/${merchantId}`, admin, {
      kycStatus: 'APPROVED',
      acquirerAccountId: 'acc-restart',
    });
    const key = await call('POST', `/v1/admin/merchants/${merchantId}/pix-keys`, admin, {
      type: 'EMAIL',
      key: 'pix@restart.test',
    });
    await call('PATCH', `/v1/admin/merchants/${merchantId}/pix-keys/${(key.body.pixKey as { id: string }).id}`, admin, {
      status: 'ACTIVE',
    });
    const user = await login('restart@start.test', 'merchant-password-3');
    // Left unpaid: its run waits for the payment or the expiry, across the restart.
    const waiting = await call('POST', '/v1/charges', user, { amount: 1000, description: 'Pedido em aberto' });
    assert.equal(waiting.status, 201, JSON.stringify(waiting.body));
    const waitingId = (waiting.body.charge as { id: string }).id;
    const charge = await call('POST', '/v1/charges', user, { amount: 2990, description: 'Pedido antes do kill' });
    assert.equal(charge.status, 201, JSON.stringify(charge.body));
    const id = (charge.body.charge as { id: string }).id;
    assert.equal((await call('POST', `/v1/sandbox/charges/${id}/pay`, user, {})).status, 202);
    const status = async (): Promise<string> =>
      ((await call('GET', `/v1/charges/${id}`, user)).body.charge as { status: string }).status;
    await waitFor(async () => (await status()) === 'PAID', 30_000, 'PAID');
    const balance = async (): Promise<unknown> => (await call('GET', '/v1/merchants/me/balance', user)).body.balance;
    assert.deepEqual(await balance(), { available: 0, pending: 2960, blocked: 0, total: 2960 });

    // The workflow now sleeps until the settlement time (8 s). Kill npm start at once: its dev
    // server, a process of its own, runs on.
    const orphan = readPidFile(localPidFile(dataDir));
    assert.ok(orphan && isOurDevServer(orphan, localDbFile(dataDir)), 'the first start wrote its dev server pid');
    const exited = new Promise<void>((resolve) => first.child.once('exit', () => resolve()));
    first.child.kill('SIGKILL');
    await exited;
    assert.ok(isOurDevServer(orphan, localDbFile(dataDir)), 'SIGKILL of npm start leaves its dev server running');
    assert.ok(fs.statSync(localDbFile(dataDir)).size > 0, "the dev server's SQLite file is under DATA_DIR");

    const second = await start();
    assert.equal(isOurDevServer(orphan, localDbFile(dataDir)), false, 'the second start ended the orphan');
    const current = readPidFile(localPidFile(dataDir));
    assert.ok(current && current !== orphan && isOurDevServer(current, localDbFile(dataDir)));
    assert.match(second.output.join(''), /ended the Temporal dev server a killed npm start left running/);
    // Only the workflow begun in the first run can move the money: the reconciler is off.
    await waitFor(
      async () =>
        JSON.stringify(await balance()) === JSON.stringify({ available: 2960, pending: 0, blocked: 0, total: 2960 }),
      60_000,
      'settled',
    ).catch((err: Error) => {
      throw new Error(`${err.message}; output:\n${second.output.join('')}`);
    });
    assert.equal(await status(), 'PAID');
    assert.doesNotMatch(second.output.join(''), /charge workflows reconciled/);

    // Operators still find both after the restart: the dev server's HTTP API lists the runs by
    // their merchant (docs/operations.md "Watching workflows") and opens the history.
    const http = /Temporal HTTP API\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(second.output.join(''))?.[1];
    assert.ok(http, 'the second start prints its Temporal HTTP API');
    // Listed by its merchant (visibility on SQLite lags a little: poll), the paid one completed
    // once its last workflow task after the settlement runs, the unpaid one still running.
    const listedRun = async (chargeId: string) => {
      const url = `${http}/api/v1/namespaces/default/workflows?query=${encodeURIComponent(`MerchantId = '${merchantId}'`)}`;
      const listed = (await (await fetch(url)).json()) as {
        executions?: Array<{ execution: { workflowId: string }; status: string }>;
      };
      return listed.executions?.find((e) => e.execution.workflowId === `charge-${chargeId}`);
    };
    await waitFor(
      async () => (await listedRun(id))?.status === 'WORKFLOW_EXECUTION_STATUS_COMPLETED',
      30_000,
      'listed COMPLETED',
    );
    await waitFor(
      async () => (await listedRun(waitingId))?.status === 'WORKFLOW_EXECUTION_STATUS_RUNNING',
      30_000,
      'the unpaid charge listed RUNNING',
    );
    assert.equal(
      ((await call('GET', `/v1/charges/${waitingId}`, user)).body.charge as { status: string }).status,
      'PENDING',
    );
    const history = (await (
      await fetch(`${http}/api/v1/namespaces/default/workflows/charge-${id}/history`)
    ).json()) as {
      history?: { events?: Array<{ eventType: string }> };
    };
    const types = (history.history?.events ?? []).map((e) => e.eventType);
    assert.ok(
      types.includes('EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED') && types.includes('EVENT_TYPE_TIMER_FIRED'),
      types.join(' '),
    );

    const stopped = new Promise<number | null>((resolve) => second.child.once('exit', (code) => resolve(code)));
    second.child.kill('SIGTERM');
    assert.equal(await stopped, 0);
    assert.equal(isOurDevServer(current, localDbFile(dataDir)), false, 'a SIGTERM of npm start ends its dev server');
    assert.equal(fs.existsSync(localPidFile(dataDir)), false, 'and removes its pidfile');
  });
});
