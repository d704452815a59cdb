/**
 * Tracing (docs/operations.md "Tracing"): one charge paid through the real stack, spans collected
 * by an in-memory exporter. The acquirer's callback opens one trace that runs through the signal,
 * the charge workflow's `recordPayment`, the outbox row, the delivery workflow and its activity to
 * the POST that brings `charge.paid` to the merchant; log lines written on the way carry its id.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { SpanKind } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Writable } from 'node:stream';
import { trace } from '@opentelemetry/api';
import { ConfigError, loadConfig } from '../../src/config';
import { createLogger } from '../../src/lib/logger';
import { currentTraceparent, tracingActive, tracingFromConfig } from '../../src/observability/tracing';
import { readyMerchant, eventually } from '../support/charges';
import { startTracedStack, type TracedStack } from '../support/tracing';

describe('tracing off by default (docs/operations.md "Tracing")', () => {
  const secrets = {
    JWT_SECRET: 'x'.repeat(32),
    API_KEY_PEPPER: 'pepper',
    ACQUIRER_CALLBACK_SECRET: 'callback',
    DATA_DIR: '/nonexistent-pixflow-tracing',
  };

  it('TRACING resolves to off unless set or implied by OTEL_EXPORTER_OTLP_ENDPOINT', () => {
    assert.equal(loadConfig(secrets).TRACING, 'off');
    assert.equal(loadConfig({ ...secrets, TRACING: 'otlp' }).TRACING, 'otlp');
    const implied = loadConfig({ ...secrets, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' });
    assert.equal(implied.TRACING, 'otlp');
    assert.equal(implied.OTEL_SERVICE_NAME, 'pixflow');
    assert.equal(
      loadConfig({ ...secrets, TRACING: 'off', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).TRACING,
      'off',
    );
    assert.throws(() => loadConfig({ ...secrets, TRACING: 'jaeger' }), ConfigError);
    assert.throws(() => loadConfig({ ...secrets, OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }), ConfigError);
  });

  it('off registers nothing: no provider, no traceparent, no trace ids in log lines', async () => {
    assert.equal(await tracingFromConfig(loadConfig(secrets)), undefined);
    assert.equal(tracingActive(), false);
    const lines: string[] = [];
    const logger = createLogger({
      destination: new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString('utf8'));
          done();
        },
      }),
    });
    trace.getTracer('test').startActiveSpan('untraced', (span) => {
      assert.equal(currentTraceparent(), undefined);
      logger.info('inside a span of the no-op provider');
      span.end();
    });
    assert.equal(lines.length, 1);
    assert.doesNotMatch(lines[0] ?? '', /traceId|spanId/);
  });
});

describe('tracing (docs/operations.md "Tracing")', function () {
  this.timeout(120_000);
  let s: TracedStack;

  before(async () => {
    s = await startTracedStack();
  });
  after(async () => {
    await s?.close();
    // Later suites run untraced, as the rest of the suite expects.
    assert.equal(tracingActive(), false);
  });

  it('one trace from the payment callback to the charge.paid delivery, through the workflows and activities', async () => {
    const m = await readyMerchant(s.api);
    s.claimMerchant(m.merchantId);
    const path = `/traced-${crypto.randomBytes(4).toString('hex')}`;
    const hook = await s.api.request<{ webhook: { secret: string } }>('POST', '/v1/webhooks/merchant', {
      token: m.token,
      body: { url: s.receiver.url(path), events: ['charge.paid'] },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    s.receiver.expect(path, hook.body.webhook.secret);

    const created = await s.api.request<{ charge: { id: string } }>('POST', '/v1/charges', {
      token: m.token,
      body: { amount: 1_990, description: 'traced' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const paid = await s.api.request('POST', `/v1/sandbox/charges/${created.body.charge.id}/pay`, {
      token: m.token,
      body: {},
    });
    assert.equal(paid.status, 202);

    const [delivered] = await s.receiver.waitFor(path, 1);
    assert.ok(delivered?.signatureValid);
    assert.equal(delivered.body.event, 'charge.paid');
    const traceparent = String(delivered.headers.traceparent);
    const [, traceId, postSpanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(traceparent) ?? [];
    assert.ok(traceId && postSpanId, `the webhook POST carries a traceparent (${traceparent})`);

    const order = [
      'POST /v1/acquirer/pix',
      'SignalWithStartWorkflow:chargeWorkflow',
      'HandleSignal:paid',
      'StartActivity:recordPayment',
      'RunActivity:recordPayment',
      'StartWorkflow:webhookDeliveryWorkflow',
      'RunWorkflow:webhookDeliveryWorkflow',
      'StartActivity:attemptWebhookDelivery',
      'RunActivity:attemptWebhookDelivery',
      'POST',
    ];
    /** From the webhook POST up to the root: every link a finished span of this trace. */
    const chainOf = (all: ReadableSpan[]): ReadableSpan[] => {
      const byId = new Map(all.map((x) => [x.spanContext().spanId, x]));
      const found: ReadableSpan[] = [];
      for (let at = byId.get(postSpanId); at; at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined) {
        found.unshift(at);
      }
      return found;
    };
    // Workflow spans reach the exporter when they end (a workflow's when it completes): wait for
    // the chain to reach back to the callback, not for a clock; a chain that never does fails below.
    let spans: ReadableSpan[] = [];
    let chain: ReadableSpan[] = [];
    await eventually(async () => {
      spans = s.exporter.getFinishedSpans().filter((x) => x.spanContext().traceId === traceId);
      chain = chainOf(spans);
      return chain.some((x) => x.name === 'POST /v1/acquirer/pix') || undefined;
    }, 'the trace to reach back from the webhook POST to the callback').catch(() => undefined);
    const names = chain.map((x) => x.name);
    // Each step found after the one before it (the chain may hold more: the test's and the sandbox's own calls).
    let at = -1;
    const positions: number[] = [];
    for (const name of order) {
      at = names.indexOf(name, at + 1);
      assert.ok(
        at >= 0,
        `${name} after ${positions.length > 0 ? order[positions.length - 1] : 'the start'} in the chain ${names.join(' → ')}`,
      );
      positions.push(at);
    }
    assert.equal(positions[positions.length - 1], chain.length - 1, 'the webhook POST ends the chain');
    const server = chain[positions[0] ?? -1];
    assert.equal(server?.kind, SpanKind.SERVER);
    assert.equal(server.attributes['http.response.status_code'], 200);
    const post = chain[chain.length - 1];
    assert.equal(post?.kind, SpanKind.CLIENT);
    assert.equal(post.attributes['url.full'], s.receiver.url(path));
    // The acquirer's own call (the simulator, over undici) is the callback's parent: one trace end to end.
    assert.ok(
      spans.some((x) => x.kind === SpanKind.CLIENT && x.spanContext().spanId === server.parentSpanId),
      'the callback request made by the simulator is a client span of the same trace',
    );

    // Where the chain crosses the database, the rows hold the span that wrote them: the inbox row
    // the callback's server span, the delivery row the recordPayment activity's span.
    const spanOf = (name: string): string | undefined => chain.find((x) => x.name === name)?.spanContext().spanId;
    const rows = async (table: string): Promise<string[]> =>
      s.knex(table).where('traceparent', 'like', `00-${traceId}-%`).pluck('traceparent');
    assert.deepEqual(
      (await rows('acquirer_callbacks')).map((t) => t.split('-')[2]),
      [spanOf('POST /v1/acquirer/pix')],
    );
    assert.deepEqual(
      (await rows('webhook_deliveries')).map((t) => t.split('-')[2]),
      [spanOf('RunActivity:recordPayment')],
    );

    // Log lines written while serving the callback and running the activities carry the trace id.
    const traced = s.logLines.filter((l) => l.traceId === traceId);
    assert.ok(traced.length > 0, 'log lines carry the trace id');
    for (const line of traced) assert.match(String(line.spanId), /^[0-9a-f]{16}$/);
  });
});
