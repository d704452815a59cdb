/**
 * GET /metrics and structured log context: request latency by matched route (never raw URLs),
 * charges created and paid through the real flow, workflow start failures, the counters other
 * features call, the worker's own metrics listener, the optional token, and log lines carrying
 * the request id and the workflow id.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { Client, Connection } from '@temporalio/client';
import { chargesStack, eventually, readyMerchant, type ChargesStack } from '../support/charges';
import { startApi } from '../support/api';
import { withWorker } from '../support/temporal';
import { createLogger } from '../../src/lib/logger';
import { withLogContext } from '../../src/lib/log-context';
import { activityLogContext } from '../../src/temporal/activity-log-context';
import { chargeWorkflowClient } from '../../src/temporal/clients/charge';
import { startMetricsServer } from '../../src/observability/metrics-server';
import { recordWebhookAttempt, recordWithdrawal } from '../../src/observability/metrics';
import { sample } from '../support/metrics';

function captureLogs(): { lines: Array<Record<string, unknown>>; raw: string[]; stream: Writable } {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      raw.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return {
    raw,
    stream,
    get lines() {
      return raw.map((l) => JSON.parse(l) as Record<string, unknown>);
    },
  };
}

describe('metrics and log context', function () {
  this.timeout(120_000);
  let s: ChargesStack;

  before(async () => {
    s = await chargesStack();
  });

  const scrape = async (base = s.api.baseUrl, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}/metrics`, { headers });
    return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
  };

  it('serves the Prometheus exposition with latency by matched route and status, never raw URLs', async () => {
    const m = await readyMerchant(s.api);
    const created = await s.api.request<{ charge: { id: string } }>('POST', '/v1/charges', {
      token: m.token,
      body: { amount: 1234, description: 'metrics' },
    });
    assert.equal(created.status, 201);
    const id = created.body.charge.id;
    assert.equal((await s.api.request('GET', `/v1/charges/${id}`, { token: m.token })).status, 200);
    assert.equal((await s.api.request('GET', '/no/such/path-x9z8')).status, 404);

    const res = await scrape();
    assert.equal(res.status, 200);
    assert.match(res.type, /^text\/plain/);
    const bucket = 'pixflow_http_request_duration_seconds_count';
    assert.ok(sample(res.text, bucket, { method: 'GET', route: '/v1/charges/:id', status: '200' }) >= 1);
    assert.ok(sample(res.text, bucket, { method: 'POST', route: '/v1/charges', status: '201' }) >= 1);
    assert.ok(sample(res.text, bucket, { route: 'unmatched', status: '404' }) >= 1);
    assert.doesNotMatch(res.text, new RegExp(id), 'no id in any label');
    assert.doesNotMatch(res.text, /path-x9z8/, 'no raw URL in any label');
    assert.match(res.text, /pixflow_process_resident_memory_bytes/, 'process metrics too');
  });

  it('counts charges created and paid through the real flow (replays and duplicates not counted)', async () => {
    const m = await readyMerchant(s.api);
    const before = (await scrape()).text;
    const body = { amount: 2500, description: 'counted' };
    const headers = { 'x-idempotency-key': `metrics-${Date.now()}` };
    const created = await s.api.request<{ charge: { id: string } }>('POST', '/v1/charges', {
      token: m.token,
      body,
      headers,
    });
    assert.equal(created.status, 201);
    assert.equal(
      (await s.api.request('POST', '/v1/charges', { token: m.token, body, headers })).status,
      200,
      'a replay',
    );
    const id = created.body.charge.id;
    assert.equal(
      (await s.api.request('POST', `/v1/sandbox/charges/${id}/pay`, { token: m.token, body: {} })).status,
      202,
    );
    await eventually(async () => {
      const c = await s.api.request<{ charge: { status: string } }>('GET', `/v1/charges/${id}`, { token: m.token });
      return c.body.charge.status === 'PAID' ? true : undefined;
    }, 'PAID');
    const after = await eventually(async () => {
      const text = (await scrape()).text;
      return sample(text, 'pixflow_charges_paid_total') > sample(before, 'pixflow_charges_paid_total')
        ? text
        : undefined;
    }, 'the paid counter');
    assert.equal(sample(after, 'pixflow_charges_created_total') - sample(before, 'pixflow_charges_created_total'), 1);
    assert.equal(
      sample(after, 'pixflow_charges_created_amount_cents_total') -
        sample(before, 'pixflow_charges_created_amount_cents_total'),
      2500,
    );
    assert.ok(
      sample(after, 'pixflow_charges_paid_amount_cents_total') -
        sample(before, 'pixflow_charges_paid_amount_cents_total') >=
        2500,
    );
  });

  it('counts workflow start failures by workflow type', async () => {
    const env = s.env;
    const connection = await Connection.connect({ address: env.address });
    await connection.close();
    const workflows = chargeWorkflowClient(new Client({ connection }), s.taskQueue);
    const before = sample((await scrape()).text, 'pixflow_workflow_start_failures_total', {
      workflow: 'chargeWorkflow',
    });
    await assert.rejects(workflows.start({ id: 'ch_metrics_unreachable', merchantId: 'mch_x' }));
    await assert.rejects(workflows.cancelRequested({ id: 'ch_metrics_unreachable', merchantId: 'mch_x' }));
    const after = sample((await scrape()).text, 'pixflow_workflow_start_failures_total', {
      workflow: 'chargeWorkflow',
    });
    assert.equal(after - before, 2);
  });

  it('exposes the withdrawal and webhook counters other features call', async () => {
    const before = (await scrape()).text;
    recordWithdrawal('completed');
    recordWebhookAttempt('timeout');
    const after = (await scrape()).text;
    const delta = (name: string, labels: Record<string, string>) =>
      sample(after, name, labels) - sample(before, name, labels);
    assert.equal(delta('pixflow_withdrawals_total', { outcome: 'completed' }), 1);
    assert.equal(delta('pixflow_webhook_attempts_total', { outcome: 'timeout' }), 1);
  });

  it('wants the bearer token when METRICS_TOKEN is set', async () => {
    const api = await startApi({ deps: { metricsToken: 'scrape-secret' } });
    try {
      const denied = await scrape(api.baseUrl);
      assert.equal(denied.status, 401);
      assert.equal(typeof (JSON.parse(denied.text) as { message: string }).message, 'string');
      assert.equal((await scrape(api.baseUrl, { authorization: 'Bearer wrong' })).status, 401);
      assert.equal((await scrape(api.baseUrl, { authorization: 'Bearer scrape-secret' })).status, 200);
    } finally {
      await api.close();
    }
  });

  it('serves the same registry from a worker alone (METRICS_PORT), with a health endpoint', async () => {
    const server = await startMetricsServer({ port: 0, host: '127.0.0.1' });
    try {
      const res = await scrape(server.url);
      assert.equal(res.status, 200);
      assert.match(res.text, /pixflow_charges_paid_total/);
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
      assert.equal((await fetch(`${server.url}/other`)).status, 404);
    } finally {
      await server.close();
    }
  });

  it('puts the request id on every log line written while serving the request, once', async () => {
    const logs = captureLogs();
    const logger = createLogger({ level: 'info', destination: logs.stream });
    const child = logger.child({ reqId: 'req-1' });
    withLogContext({ reqId: 'req-1' }, () => {
      logger.info('from a service');
      child.info('from the request logger');
    });
    assert.deepEqual(
      logs.lines.map((l) => l.reqId),
      ['req-1', 'req-1'],
    );
    assert.equal(logs.raw[1]?.match(/"reqId"/g)?.length, 1, 'not repeated when the child binds it');

    const api = await startApi({ deps: { logger } });
    try {
      const res = await fetch(`${api.baseUrl}/healthz`, { headers: { 'x-request-id': 'trace-me-42' } });
      assert.equal(res.headers.get('x-request-id'), 'trace-me-42');
      await eventually(
        async () => (logs.lines.some((l) => l.reqId === 'trace-me-42' && l.msg === 'request') ? true : undefined),
        'access log',
      );
    } finally {
      await api.close();
    }
  });

  it('puts the workflow id on every log line an activity writes', async () => {
    const logs = captureLogs();
    const logger = createLogger({ level: 'info', destination: logs.stream });
    const workflowId = `logging-${Date.now()}`;
    await withWorker(
      {
        workflowsPath: require.resolve('../workflow/fixtures/log-context-workflows'),
        activities: { logSomething: async (note: string) => logger.info({ note }, 'activity ran') },
        workerOptions: { interceptors: { activity: [activityLogContext] } },
      },
      ({ client, taskQueue }) => client.workflow.execute('loggingWorkflow', { taskQueue, workflowId, args: ['hello'] }),
    );
    const line = logs.lines.find((l) => l.msg === 'activity ran');
    assert.ok(line);
    assert.equal(line.workflowId, workflowId);
    assert.equal(line.activityType, 'logSomething');
    assert.equal(typeof line.runId, 'string');
  });
});
