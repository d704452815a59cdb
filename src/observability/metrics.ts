/**
 * Every Prometheus metric pixflow exposes, in one registry (docs/operations.md "Metrics and logs"). Code that
 * does something worth counting calls one of the `record…` functions below; nothing else touches
 * prom-client. The API serves the registry at GET /metrics; a worker started alone serves it on
 * METRICS_PORT. The Temporal worker's own metrics come from the SDK's exporter
 * (TEMPORAL_METRICS_ADDRESS), not from here.
 *
 * Labels are small fixed sets (route patterns, status codes, outcomes), never ids or raw URLs,
 * so the number of series stays bounded.
 */
import crypto from 'node:crypto';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry, prefix: 'pixflow_' });

const httpDuration = new Histogram({
  name: 'pixflow_http_request_duration_seconds',
  help: 'HTTP request latency by method, matched route pattern and status code',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [metricsRegistry],
});

const chargesCreated = new Counter({
  name: 'pixflow_charges_created_total',
  help: 'Charges created (idempotent replays not counted)',
  registers: [metricsRegistry],
});
const chargesCreatedAmount = new Counter({
  name: 'pixflow_charges_created_amount_cents_total',
  help: 'Sum of the amounts of created charges, in cents',
  registers: [metricsRegistry],
});
const chargesPaid = new Counter({
  name: 'pixflow_charges_paid_total',
  help: 'Charges paid (each payment applied once, duplicates not counted)',
  registers: [metricsRegistry],
});
const chargesPaidAmount = new Counter({
  name: 'pixflow_charges_paid_amount_cents_total',
  help: 'Sum of the amounts of paid charges, in cents',
  registers: [metricsRegistry],
});

/** What happened to a withdrawal: requested (debited, sent on), then one terminal outcome. */
export type WithdrawalOutcome = 'requested' | 'rejected' | 'completed' | 'failed' | 'refunded';
const withdrawals = new Counter({
  name: 'pixflow_withdrawals_total',
  help: 'Withdrawals by outcome: requested, rejected (refused before any debit), completed, failed, refunded',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});

/** One delivery attempt of a webhook: a 2xx, another status, a timeout, or no connection. */
export type WebhookAttemptOutcome = 'success' | 'http_error' | 'timeout' | 'network_error';
const webhookAttempts = new Counter({
  name: 'pixflow_webhook_attempts_total',
  help: 'Webhook delivery attempts by outcome: success (2xx), http_error, timeout, network_error',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});
const webhookDeliveriesFailed = new Counter({
  name: 'pixflow_webhook_deliveries_failed_total',
  help: 'Webhook deliveries given up after their last attempt',
  registers: [metricsRegistry],
});

const workflowStartFailures = new Counter({
  name: 'pixflow_workflow_start_failures_total',
  help: 'Workflow starts (or signal-with-starts) Temporal refused or could not be reached for, by workflow type',
  labelNames: ['workflow'] as const,
  registers: [metricsRegistry],
});

/** An answered HTTP request; `route` is the router's pattern (e.g. /v1/charges/:id), never the URL. */
export function recordHttpRequest(method: string, route: string, status: number, seconds: number): void {
  httpDuration.observe({ method, route, status: String(status) }, seconds);
}

export function recordChargeCreated(amountCents: number): void {
  chargesCreated.inc();
  chargesCreatedAmount.inc(amountCents);
}

export function recordChargePaid(amountCents: number): void {
  chargesPaid.inc();
  chargesPaidAmount.inc(amountCents);
}

export function recordWithdrawal(outcome: WithdrawalOutcome): void {
  withdrawals.inc({ outcome });
}

export function recordWebhookAttempt(outcome: WebhookAttemptOutcome): void {
  webhookAttempts.inc({ outcome });
}

export function recordWebhookDeliveryFailed(): void {
  webhookDeliveriesFailed.inc();
}

/** `workflow` is the workflow type, e.g. chargeWorkflow, withdrawalWorkflow, webhookDeliveryWorkflow. */
export function recordWorkflowStartFailure(workflow: string): void {
  workflowStartFailures.inc({ workflow });
}

const operatorCasesOpened = new Counter({
  name: 'pixflow_operator_cases_opened_total',
  help: 'Operator cases opened, by kind (docs/operations.md "Operator cases"): alert on any increase',
  labelNames: ['kind'] as const,
  registers: [metricsRegistry],
});

/** `kind` is one of OPERATOR_CASE_KINDS; counted once per case, after the transaction that opened it. */
export function recordOperatorCaseOpened(kind: string): void {
  operatorCasesOpened.inc({ kind });
}

/** The Prometheus text exposition of every metric above. */
export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  return { contentType: metricsRegistry.contentType, body: await metricsRegistry.metrics() };
}

/** Whether an Authorization header carries METRICS_TOKEN (compared in constant time). */
export function metricsTokenMatches(authorization: string | undefined, token: string): boolean {
  const given = /^Bearer (.+)$/i.exec(authorization ?? '')?.[1] ?? '';
  const digest = (v: string): Buffer => crypto.createHash('sha256').update(v).digest();
  return crypto.timingSafeEqual(digest(given), digest(token));
}
