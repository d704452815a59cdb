/**
 * The README's first steps run as written, so the README cannot drift from the service: its
 * three shell blocks are read from README.md and run with bash — terminal 1 (`npm start` with an
 * operator login), terminal 2 (the node receiver), terminal 3 (operator, merchant, charge, payment).
 * Only the ports change (a free one instead of 3000 and 8081, so runs never collide), and terminal
 * 3 runs pasted as one script, as a reader may: its loops wait for the PIX key to be ACTIVE and
 * for the charge to be PAID. Like a reader's terminal, bash runs them without `-e`: the answers
 * are what the test checks.
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

    // Terminal 3, pasted as one script: its own loops wait for the key and for the payment.
    const third = spawnSync('bash', ['-c', ports(steps)], { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 });
    assert.equal(third.status, 0, third.stderr + third.stdout);
    assert.match(third.stdout, /"secret":"whsec_/, 'the webhook is registered and its secret shown');
    const rest = steps.slice(steps.indexOf('\n# 6.'));
    const shown = /^# (\{"balance":.*?\}\})/m.exec(rest)?.[1];
    assert.ok(shown, 'the README shows the balance step 6 answers');
    assert.ok(third.stdout.includes(shown), `the balance the README shows, ${shown}, in:\n${third.stdout}`);
    await until(() => (printed.includes('"charge.paid"') ? true : undefined), 'terminal 2 to print charge.paid');
    assert.match(printed, /^\S+ \{.*"charge\.paid"/m, 'printed with its signature header');
  });
});
