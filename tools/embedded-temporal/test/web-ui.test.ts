/**
 * The Web UI's port (README "Web UI"): the UI's static build with an index.html fallback for its
 * client-side routes, the HTTP API on the same origin, nothing outside the build folder served,
 * a page that says how to build when there is no build; and the launcher's --ui-port/--headless.
 * (The real UI in a browser: test/e2e/temporal-ui.test.ts.)
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { silentLogger, startServer, type RunningServer } from '../src/index';
import { DEFAULT_UI_DIR, parseArgs } from '../src/main';

describe('embedded-temporal: Web UI', function () {
  this.timeout(30_000);
  let dir: string;
  let server: RunningServer;
  let base: string;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tts-ui-'));
    fs.mkdirSync(path.join(dir, 'build', '_app', 'immutable'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'build', 'index.html'), '<!doctype html><title>shell</title>');
    fs.writeFileSync(path.join(dir, 'build', '_app', 'immutable', 'start.abc.js'), 'export {};');
    fs.writeFileSync(path.join(dir, 'secret.txt'), 'outside the build');
    server = await startServer({
      port: 0,
      httpPort: 0,
      uiPort: 0,
      uiDir: path.join(dir, 'build'),
      timeSkipping: false,
      logger: silentLogger,
    });
    base = `http://127.0.0.1:${server.uiPort}`;
  });
  after(async () => {
    await server?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves the shell at / and for any client-side route, revalidated', async () => {
    for (const p of ['/', '/namespaces/default/workflows', '/namespaces/default/workflows/charge-1/run/history']) {
      const res = await fetch(`${base}${p}`);
      assert.equal(res.status, 200, p);
      assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      assert.match(await res.text(), /<title>shell<\/title>/);
    }
  });

  it('serves the build files with their type, hashed ones cached for good', async () => {
    const res = await fetch(`${base}/_app/immutable/start.abc.js`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.match(res.headers.get('cache-control') ?? '', /immutable/);
    assert.equal(await res.text(), 'export {};');
    const head = await fetch(`${base}/_app/immutable/start.abc.js`, { method: 'HEAD' });
    assert.equal(head.headers.get('content-length'), '10');
  });

  it('never serves a file outside the build folder', async () => {
    for (const p of ['/../secret.txt', '/%2e%2e/secret.txt', '/_app/..%2f..%2fsecret.txt', '/%00', '/%E0%A4%A']) {
      const res = await fetch(`${base}${p}`);
      assert.equal(res.status, 200, p);
      assert.doesNotMatch(await res.text(), /outside the build/, p);
    }
  });

  it('answers the HTTP API on the same origin, as the UI calls it', async () => {
    const settings = (await (await fetch(`${base}/api/v1/settings`)).json()) as { DefaultNamespace: string };
    assert.equal(settings.DefaultNamespace, 'default');
    const list = await fetch(
      `${base}/api/v1/namespaces/default/workflows?query=${encodeURIComponent("WorkflowType='x'")}`,
    );
    assert.equal(list.status, 200);
    assert.deepEqual(await list.json(), {});
    const unknown = await fetch(`${base}/api/v1/nope`);
    assert.equal(unknown.status, 404);
    assert.deepEqual(await unknown.json(), { code: 5, message: 'Not Found', details: [] });
  });

  it('answers payloads in their long form there, as the UI decodes them (the HTTP API port: shorthand)', async () => {
    const wf = `ui-payloads-${Date.now()}`;
    const payload = {
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from(JSON.stringify({ chargeId: 'c1' })).toString('base64'),
    };
    const started = await fetch(`${base}/api/v1/namespaces/default/workflows/${wf}`, {
      method: 'POST',
      body: JSON.stringify({ workflowType: { name: 'w' }, taskQueue: { name: 'q' }, input: { payloads: [payload] } }),
    });
    assert.equal(started.status, 200, await started.clone().text());
    const history = async (origin: string): Promise<unknown> => {
      const res = await fetch(`${origin}/api/v1/namespaces/default/workflows/${wf}/history`);
      const body = (await res.json()) as {
        history: { events: { workflowExecutionStartedEventAttributes?: { input: unknown } }[] };
      };
      return body.history.events[0].workflowExecutionStartedEventAttributes?.input;
    };
    assert.deepEqual(await history(base), { payloads: [payload] });
    assert.deepEqual(await history(`http://127.0.0.1:${server.httpPort}`), [{ chargeId: 'c1' }]);
  });

  it("answers the schedules page's count of running scheduler runs (none)", async () => {
    const query = 'TemporalNamespaceDivision="TemporalScheduler" AND ExecutionStatus="Running"';
    const res = await fetch(`${base}/api/v1/namespaces/default/workflow-count?query=${encodeURIComponent(query)}`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {});
  });

  it('takes only GET and HEAD for the UI', async () => {
    const res = await fetch(`${base}/`, { method: 'POST', body: '{}' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET, HEAD');
  });

  it('says how to build it when there is no build, and the API still answers', async () => {
    const bare = await startServer({
      port: 0,
      uiPort: 0,
      uiDir: path.join(dir, 'missing'),
      timeSkipping: false,
      logger: silentLogger,
    });
    try {
      const res = await fetch(`http://127.0.0.1:${bare.uiPort}/namespaces/default/workflows`);
      assert.equal(res.status, 503);
      assert.match(await res.text(), /npm run build -w @pixflow\/temporal-ui/);
      assert.equal((await fetch(`http://127.0.0.1:${bare.uiPort}/api/v1/system-info`)).status, 200);
    } finally {
      await bare.close();
    }
  });

  it('the launcher: UI on port + 1000 as the dev server, a free one for --port 0, none when headless', () => {
    const dev = (...args: string[]) => parseArgs(['server', 'start-dev', ...args]);
    assert.deepEqual([dev('--port', '7233').uiPort, dev('--port', '7233').uiDir], [8233, DEFAULT_UI_DIR]);
    assert.equal(dev('--port', '0').uiPort, 0);
    assert.equal(dev('--port', '65000').uiPort, 0);
    assert.equal(dev('--port', '7233', '--ui-port', '9000').uiPort, 9000);
    assert.equal(dev('--port', '7233', '--ui-port=9001', '--ui-dir', '/tmp/ui').uiDir, '/tmp/ui');
    assert.equal(dev('--port', '7233', '--headless').uiPort, undefined);
    assert.deepEqual(dev('--port', '7233', '--headless').warnings, []);
    assert.equal(parseArgs(['--port', '7233']).uiPort, undefined);
    assert.equal(parseArgs(['--port', '7233', '--ui-port', '8233']).uiPort, 8233);
    assert.equal(parseArgs(['7233']).uiPort, undefined);
  });
});
