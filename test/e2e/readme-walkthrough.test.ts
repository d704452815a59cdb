/**
 * The README's first steps run as written, so the README cannot drift from the service: its
 * three shell blocks are read from README.md and run with bash — terminal 1 (`npm start` with an
 * operator login), terminal 2 (the node receiver), terminal 3 (operator, merchant, charge, payment).
 * Only the ports change (a free one instead of 3000 and 8081, so runs never collide), and terminal
 * 3 runs in two parts around its one timing note: step 4 starts once the PIX key is ACTIVE, as the
 * README tells a reader to wait for. Like a reader's terminal, bash runs them without `-e`: the
 * answers are what the test checks.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/db/embedded-postgres';
import { isOurDevServer, readPidFile } from '../../src/temporal/local-server-process';
import { localDbFile, localPidFile } from '../../src/temporal/local-server';

const ROOT = path.resolve(__dirname, '../..');

/** The ```sh blocks of the README section `heading`, in order. */
function shellBlocks(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `README has a "${heading}" section`);
  const end = markdown.indexOf('\n## ', start + heading.length + 4);
  const section = markdown.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
}

async function until<T>(
  check: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await Promise.resolve(check()).catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('README "First steps: a charge paid, a webhook received", run as written', function () {
  this.timeout(180_000);
  const children: ChildProcess[] = [];
  let dataDir: string;

  after(() => {
    // Each terminal is its own process group: killing the group stops npm start and what it spawned,
    // not only the shell (a bare kill left npm start running after the suite).
    for (const c of children)
      if (c.exitCode === null && c.pid !== undefined) {
        try {
          process.kill(-c.pid, 'SIGKILL');
        } catch {
          c.kill('SIGKILL');
        }
      }
    // The dev server runs in a process group of its own (so a Ctrl-C reaches npm start first): a
    // killed npm start leaves it running, so end it by its pidfile.
    const devServer = dataDir ? readPidFile(localPidFile(dataDir)) : undefined;
    if (devServer && isOurDevServer(devServer, localDbFile(dataDir))) process.kill(devServer, 'SIGKILL');
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('pays a charge and delivers the signed charge.paid to the receiver', async () => {
    const blocks = shellBlocks(
      fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'),
      'First steps: a charge paid, a webhook received',
    );
    assert.equal(blocks.length, 3, 'terminal 1, 2 and 3');
    const [service, receiver, steps] = blocks as [string, string, string];
    const apiPort = await freePort();
    const receiverPort = await freePort();
    const ports = (block: string): string =>
      block.replaceAll('localhost:3000', `localhost:${apiPort}`).replaceAll('8081', String(receiverPort));
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-readme-'));
    // As root the embedded PostgreSQL runs as `postgres`, which must reach the folder.
    fs.chmodSync(dataDir, 0o755);
    const env = {
      ...process.env,
      PORT: String(apiPort),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    };
    const run = (script: string): ChildProcess => {
      const child = spawn('bash', ['-c', script], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      children.push(child);
      return child;
    };

    // Terminal 1 and 2.
    let serviceOutput = '';
    const api = run(ports(service));
    api.stdout?.on('data', (d: Buffer) => (serviceOutput += d.toString()));
    api.stderr?.on('data', (d: Buffer) => (serviceOutput += d.toString()));
    let printed = '';
    const rx = run(ports(receiver));
    rx.stdout?.on('data', (d: Buffer) => (printed += d.toString()));
    await until(
      async () => ((await fetch(`http://127.0.0.1:${apiPort}/readyz`)).status === 200 ? true : undefined),
      `npm start to be ready:\n${serviceOutput}`,
      120_000,
    );

    // Terminal 3, steps 1–3, then (once the key is ACTIVE, as the README says) steps 4–6.
    const script = ports(steps);
    const split = script.indexOf('\n# 4.');
    assert.ok(split > 0, 'step 4 is where the README says to wait for the key');
    const state = path.join(dataDir, 'walkthrough-state.sh');
    const first = spawnSync(
      'bash',
      [
        '-c',
        `${script.slice(0, split)}\ndeclare -p B J ADMIN MERCHANT USER APIKEY > ${state}; declare -f pick >> ${state}`,
      ],
      {
        cwd: ROOT,
        env,
        encoding: 'utf8',
      },
    );
    assert.equal(first.status, 0, first.stderr + first.stdout);
    assert.match(first.stdout, /"secret":"whsec_/, 'the webhook is registered and its secret shown');
    const vars = fs.readFileSync(state, 'utf8');
    const admin = /ADMIN="([^"]+)"/.exec(vars)?.[1];
    const merchant = /MERCHANT="([^"]+)"/.exec(vars)?.[1];
    assert.ok(admin && merchant && /APIKEY="pixflow_/.test(vars), `steps 1–3 set their variables: ${vars}`);
    await until(async () => {
      const res = await fetch(`http://127.0.0.1:${apiPort}/v1/admin/merchants/${merchant}`, {
        headers: { authorization: `Bearer ${admin}` },
      });
      return /"status":"ACTIVE"[^}]*"key":"pix@loja|"key":"pix@loja[^}]*"status":"ACTIVE"/.test(await res.text())
        ? true
        : undefined;
    }, 'the acquirer to confirm the PIX key');

    const rest = script.slice(split);
    const paid = await until(() => {
      const second = spawnSync('bash', ['-c', `source ${state}\n${rest}`], { cwd: ROOT, env, encoding: 'utf8' });
      assert.equal(second.status, 0, second.stderr + second.stdout);
      // "A moment later": the last two commands are read again until the payment has been applied.
      return second.stdout.includes('"status":"PAID"') ? second.stdout : undefined;
    }, 'the charge to be PAID');
    const shown = /^# (\{"balance":.*?\}\})/m.exec(rest)?.[1];
    assert.ok(shown, 'the README shows the balance step 6 answers');
    assert.ok(paid.includes(shown), `the balance the README shows, ${shown}, in:\n${paid}`);
    await until(() => (printed.includes('"charge.paid"') ? true : undefined), 'terminal 2 to print charge.paid');
    assert.match(printed, /^\S+ \{.*"charge\.paid"/m, 'printed with its signature header');
  });
});
