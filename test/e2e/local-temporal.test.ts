/**
 * The dev server `npm start` spawns (src/temporal/local-server.ts; README "What `npm start`
 * runs"), on its own: the official binary comes up durable under DATA_DIR with our search
 * attributes; a later start ends the one an earlier start left behind, but never a process whose
 * pid merely sits in the pidfile; a server that dies or never answers fails with a message naming
 * its log file. The failures use small shell scripts as TEMPORAL_CLI_PATH (real processes).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../src/lib/logger';
import { isOurDevServer, readPidFile } from '../../src/temporal/local-server-process';
import {
  LocalTemporalError,
  localDbFile,
  localLogFile,
  localPidFile,
  startLocalTemporal,
  type LocalTemporal,
} from '../../src/temporal/local-server';

const logger = createLogger({ level: 'silent' });

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("npm start's Temporal dev server (src/temporal/local-server.ts)", function () {
  this.timeout(120_000);
  let dataDir: string;
  const started: LocalTemporal[] = [];

  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-local-temporal-'));
  });

  afterEach(async () => {
    for (const t of started.splice(0)) await t.stop();
    delete process.env.TEMPORAL_CLI_PATH;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** A stand-in binary: a shell script of `body`. */
  function script(body: string): string {
    const file = path.join(dataDir, 'fake-temporal');
    fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    return file;
  }

  it('starts `temporal server start-dev` on SQLite under DATA_DIR with our search attributes, and stops it', async () => {
    const t = await startLocalTemporal({ dataDir, logger, ui: false });
    started.push(t);
    assert.match(t.kind, /^official dev server, temporal CLI \d+\.\d+\.\d+$/);
    assert.equal(t.uiUrl, undefined, 'TEMPORAL_UI=off: headless');
    assert.ok(isOurDevServer(t.pid, localDbFile(dataDir)));
    assert.equal(readPidFile(localPidFile(dataDir)), t.pid);
    const res = await fetch(`${t.httpUrl}/api/v1/namespaces/default/search-attributes`);
    const body = (await res.json()) as { customAttributes: Record<string, string> };
    assert.equal(body.customAttributes.MerchantId, 'INDEXED_VALUE_TYPE_KEYWORD');
    assert.equal(body.customAttributes.EntityId, 'INDEXED_VALUE_TYPE_KEYWORD');
    await started.pop()?.stop();
    assert.equal(isOurDevServer(t.pid, localDbFile(dataDir)), false);
    assert.equal(fs.existsSync(localPidFile(dataDir)), false);
    assert.ok(fs.statSync(localDbFile(dataDir)).size > 0, 'its state stays for the next start');
  });

  it('ends the server an earlier start left running, on the same database', async () => {
    const first = await startLocalTemporal({ dataDir, logger, ui: false });
    // Never stopped, as when npm start is SIGKILLed.
    const second = await startLocalTemporal({ dataDir, logger, ui: false });
    started.push(second);
    assert.equal(isOurDevServer(first.pid, localDbFile(dataDir)), false, 'the orphan ended');
    assert.ok(isOurDevServer(second.pid, localDbFile(dataDir)));
    assert.equal(readPidFile(localPidFile(dataDir)), second.pid);
  });

  it('leaves alone a process that is not our dev server, whatever the pidfile says', async () => {
    const other = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      fs.mkdirSync(path.dirname(localPidFile(dataDir)), { recursive: true });
      fs.writeFileSync(localPidFile(dataDir), `${other.pid}\n`);
      started.push(await startLocalTemporal({ dataDir, logger, ui: false }));
      assert.ok(alive(other.pid as number), 'a reused pid is not ours to end');
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('fails naming its log file when the server exits before it is ready', async () => {
    process.env.TEMPORAL_CLI_PATH = script('echo "listen tcp: bind: address already in use" >&2; exit 3');
    await assert.rejects(startLocalTemporal({ dataDir, logger, ui: true }), (err: Error) => {
      assert.ok(err instanceof LocalTemporalError);
      assert.ok(err.message.includes(`exited (3) before it was ready; see ${localLogFile(dataDir)}`), err.message);
      assert.match(err.message, /address already in use/, 'with the end of the log');
      return true;
    });
    assert.equal(fs.existsSync(localPidFile(dataDir)), false);
  });

  it('fails naming its log file, and ends the process, when the server never answers', async () => {
    const pidOut = path.join(dataDir, 'fake.pid');
    process.env.TEMPORAL_CLI_PATH = script(`echo $$ > ${pidOut}; exec sleep 60`);
    await assert.rejects(startLocalTemporal({ dataDir, logger, ui: false, readyTimeoutMs: 500 }), (err: Error) => {
      assert.ok(err instanceof LocalTemporalError);
      assert.equal(err.message, `Temporal dev server not ready after 0.5 s; see ${localLogFile(dataDir)}`);
      return true;
    });
    assert.equal(alive(Number(fs.readFileSync(pidOut, 'utf8'))), false, 'the server that never answered is ended');
    assert.equal(fs.existsSync(localPidFile(dataDir)), false);
  });

  it('says what it tried when there is no binary to run', async () => {
    process.env.TEMPORAL_CLI_PATH = path.join(dataDir, 'missing-temporal');
    await assert.rejects(startLocalTemporal({ dataDir, logger, ui: false }), (err: Error) => {
      assert.ok(err instanceof LocalTemporalError);
      assert.match(err.message, /TEMPORAL_CLI_PATH=.*missing-temporal is not an executable file/);
      return true;
    });
  });
});
