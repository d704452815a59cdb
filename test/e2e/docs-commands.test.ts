/**
 * The shell commands of docs/api.md and docs/operations.md run as written, so the guides cannot
 * drift from the service. Every ```sh / ```bash block of those files either runs here, in
 * document order, against one `npm start` (the README's terminal 1 with
 * `SIMULATOR_AUTO_COMPLETE=false`, as the withdrawal walkthrough asks), or is preceded by a
 * `<!-- not-run: <reason> -->` line saying why it cannot run on this machine. The variables a
 * block expects ($B, $ADMIN, $MERCHANT, $APIKEY) come from the README's first steps 1–2, and each
 * block's variables carry over to the next, as in one reader's terminal. Blocks run under
 * `set -eo pipefail` with curl failing on an HTTP error (`--fail-with-body`), so every command
 * must succeed; a few answers are checked against what the guide shows.
 */
import { shellBlocks, type Block } from '../support/shell-blocks';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/db/embedded-postgres';
import { isOurDevServer, readPidFile } from '../../src/temporal/local-server-process';
import { localDbFile, localPidFile } from '../../src/temporal/local-server';

const ROOT = path.resolve(__dirname, '../..');
const GUIDES = ['docs/api.md', 'docs/operations.md'];
/** The variables the guides set and use, carried from one block to the next. */
const CARRIED = ['B', 'J', 'ADMIN', 'MERCHANT', 'USER', 'APIKEY', 'WH', 'CHARGE', 'W1', 'W2'];

/** The ```sh blocks of a README section. */
function readmeBlocks(heading: string): string[] {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `README has a "${heading}" section`);
  const end = readme.indexOf('\n## ', start + heading.length + 4);
  return [...readme.slice(start, end < 0 ? undefined : end).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
}

async function until<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The id of the object whose `key` is `key`, anywhere in a JSON answer. */
function findKeyId(json: unknown, key: string): string | undefined {
  if (json === null || typeof json !== 'object') return undefined;
  const o = json as Record<string, unknown>;
  if (o.key === key && typeof o.id === 'string') return o.id;
  for (const v of Object.values(o)) {
    const found = findKeyId(v, key);
    if (found) return found;
  }
  return undefined;
}

const blocks = GUIDES.flatMap(shellBlocks);

describe('docs/api.md and docs/operations.md: every shell command', function () {
  this.timeout(240_000);
  const children: ChildProcess[] = [];
  let dataDir: string;

  after(async () => {
    // npm start runs in its own process group: npm, the shell it execs through and node all stop
    // (and PostgreSQL with them) before its data folder goes.
    for (const c of children) {
      if (c.pid === undefined) continue;
      const group = -c.pid;
      const alive = (): boolean => {
        try {
          process.kill(group, 0);
          return true;
        } catch {
          return false;
        }
      };
      if (!alive()) continue;
      process.kill(group, 'SIGTERM');
      await until(async () => (alive() ? undefined : true), 'npm start to stop', 30_000).catch(() => {
        if (alive()) process.kill(group, 'SIGKILL');
      });
    }
    // The dev server runs in a process group of its own (so a Ctrl-C reaches npm start first): a
    // killed npm start leaves it running, so end it by its pidfile.
    const devServer = dataDir ? readPidFile(localPidFile(dataDir)) : undefined;
    if (devServer && isOurDevServer(devServer, localDbFile(dataDir))) process.kill(devServer, 'SIGKILL');
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(path.join(ROOT, 'h.json'), { force: true });
  });

  it('each block runs here or says why not', () => {
    assert.ok(blocks.length >= 5, `found ${blocks.length} blocks`);
    for (const b of blocks) {
      if (b.notRun !== undefined) assert.match(b.notRun, /^needs \S.{4,}/, `${b.file}:${b.line}: a reason`);
    }
  });

  it('runs every runnable block in order against npm start, each command succeeding', async () => {
    const [terminal1, , terminal3] = readmeBlocks('First steps: a charge paid, a webhook received') as [
      string,
      string,
      string,
    ];
    const apiPort = await freePort();
    const port = (s: string): string => s.replaceAll('localhost:3000', `localhost:${apiPort}`);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-docs-'));
    // As root the embedded PostgreSQL runs as `postgres`, which must reach the folder.
    fs.chmodSync(dataDir, 0o755);
    const env = {
      ...process.env,
      PORT: String(apiPort),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      SIMULATOR_AUTO_COMPLETE: 'false',
    };
    let serviceOutput = '';
    const api = spawn('bash', ['-c', terminal1], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    children.push(api);
    api.stdout?.on('data', (d: Buffer) => (serviceOutput += d.toString()));
    api.stderr?.on('data', (d: Buffer) => (serviceOutput += d.toString()));
    await until(
      async () => ((await fetch(`http://127.0.0.1:${apiPort}/readyz`)).status === 200 ? true : undefined),
      `npm start to be ready:\n${serviceOutput}`,
      120_000,
    );

    // The README's steps 1–2: an operator, a merchant with its KYC approved and PIX key, an API key.
    // With auto-complete off the acquirer confirms the key only when told to (the sandbox,
    // docs/api.md), so the steps run in two parts around the README's wait for the key.
    const state = path.join(dataDir, 'state.sh');
    const steps = port(terminal3.slice(0, terminal3.indexOf('\n# 3.')));
    const wait = steps.indexOf('\n#    A charge needs an ACTIVE key');
    assert.ok(wait > 0, "the README's step 1 waits for the key");
    const runSteps = (code: string, vars: string) => {
      const save = `declare -p ${vars} > ${state}; declare -f pick >> ${state}`;
      const ran = spawnSync('bash', ['-c', `${code}\n${save}`], {
        cwd: ROOT,
        env,
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(ran.status, 0, ran.stderr + ran.stdout);
    };
    runSteps(steps.slice(0, wait), 'B J ADMIN MERCHANT');
    const [admin, merchant] = ['ADMIN', 'MERCHANT'].map(
      (v) => new RegExp(`${v}="([^"]+)"`).exec(fs.readFileSync(state, 'utf8'))?.[1] ?? '',
    );
    assert.ok(admin && merchant, fs.readFileSync(state, 'utf8'));
    const keyId = await until(async () => {
      const res = await fetch(`http://127.0.0.1:${apiPort}/v1/admin/merchants/${merchant}`, {
        headers: { authorization: `Bearer ${admin}` },
      });
      return findKeyId(await res.json(), 'pix@loja.example.com');
    }, 'the PIX key');
    // The sandbox is the merchant's: its user's token, from a login as step 2 makes it.
    const login = await fetch(`http://127.0.0.1:${apiPort}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'loja@example.com', password: 'loja-password-1' }),
    });
    const userToken = ((await login.json()) as { token?: string }).token ?? '';
    await until(async () => {
      const res = await fetch(`http://127.0.0.1:${apiPort}/v1/sandbox/pix-keys/${keyId}/activate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${userToken}`, 'content-type': 'application/json' },
        body: '{}',
      });
      return res.ok ? true : undefined;
    }, 'the sandbox to accept the activation');
    runSteps(`source ${state}\n${steps.slice(wait)}`, 'B J ADMIN MERCHANT USER APIKEY');
    const apikey = /APIKEY="([^"]+)"/.exec(fs.readFileSync(state, 'utf8'))?.[1] ?? '';
    assert.ok(apikey.startsWith('pixflow_'), fs.readFileSync(state, 'utf8'));

    // As one reader's terminal: strict, curl failing on HTTP errors, variables carried over.
    const prelude = `set -eo pipefail\ncurl() { command curl --fail-with-body "$@"; }\nsource ${state}\n`;
    const runBlock = (b: Block): { status: number | null; stdout: string; stderr: string } => {
      const save = `for v in ${CARRIED.join(' ')}; do declare -p $v 2>/dev/null; done > ${state}.next || true`;
      // stderr to a file, as a terminal would take it: /dev/stderr cannot be opened on a socket pair.
      const errFile = path.join(dataDir, 'stderr.txt');
      const errFd = fs.openSync(errFile, 'w');
      const run = spawnSync('bash', ['-c', `${prelude}${port(b.code)}\n${save}`], {
        cwd: ROOT,
        env,
        encoding: 'utf8',
        timeout: 90_000,
        stdio: ['ignore', 'pipe', errFd],
      });
      fs.closeSync(errFd);
      return { status: run.status, stdout: run.stdout, stderr: fs.readFileSync(errFile, 'utf8') };
    };
    const outputs: string[] = [];
    for (const b of blocks.filter((x) => x.notRun === undefined)) {
      const run = runBlock(b);
      assert.equal(
        run.status,
        0,
        `${b.file}:${b.line} failed (exit ${run.status}):\n${run.stderr}\n${run.stdout}\n--- service:\n${serviceOutput.slice(-3000)}`,
      );
      fs.renameSync(`${state}.next`, state);
      outputs.push(`${run.stdout}\n${run.stderr}`);
      // What the charge walkthrough shows as its answer (`# {"balance":…}`) is what it printed.
      const shown = [...b.code.matchAll(/^# (\{"balance":\{[^}]*\}\})/gm)].map((m) => m[1]);
      if (b.code.includes('Pedido 1001'))
        for (const s of shown) assert.ok(run.stdout.includes(s), `${b.file}:${b.line} shows ${s}:\n${run.stdout}`);
    }
    // A block marked "… exits 1" beside npm start must still do so, naming what it needs (so the
    // marker goes when the command starts working here).
    for (const b of blocks.filter((x) => x.notRun?.includes('beside npm start it exits 1'))) {
      const run = runBlock(b);
      assert.equal(run.status, 1, `${b.file}:${b.line}: ${run.stderr}${run.stdout}`);
      for (const v of b.notRun?.match(/\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/g) ?? [])
        assert.ok(`${run.stdout}${run.stderr}`.includes(v), `${b.file}:${b.line} says it needs ${v}`);
    }
    const all = outputs.join('\n');
    assert.match(all, /"secret":"whsec_/, 'the webhook secret shown once');
    assert.match(all, /"available":9901/, 'the settled charge, as the withdrawal walkthrough shows');
    const history = JSON.parse(fs.readFileSync(path.join(ROOT, 'h.json'), 'utf8')) as { events?: unknown[] };
    assert.ok((history.events?.length ?? 0) > 0, 'workflows show --json wrote a history');
  });
});
