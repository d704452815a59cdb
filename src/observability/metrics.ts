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
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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
export type WebhookAttemptOutcome = 'success' | 'http_error' | 'timeout' | 'network_error' | 'secret_unavailable';
const webhookAttempts = new Counter({
  name: 'pixflow_webhook_attempts_total',
  help: 'Webhook delivery attempts by outcome: success (2xx), http_error, timeout, network_error, secret_unavailable',
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

const signalsUnconfirmed = new Counter({
  name: 'pixflow_signals_unconfirmed_total',
  help: 'Workflow signals the source of truth did not bear out, changing nothing (docs/architecture.md "Workflows carry intent; activities check facts"): alert on any increase',
  labelNames: ['workflow', 'signal', 'verdict'] as const,
  registers: [metricsRegistry],
});

export type SignalVerdict = 'no_source' | 'disagrees';

/** `workflow`: charge, withdrawal or infraction; `signal` its name; counted once per check that found it unconfirmed. */
export function recordSignalUnconfirmed(workflow: string, signal: string, verdict: SignalVerdict): void {
  signalsUnconfirmed.inc({ workflow, signal, verdict });
}

/** The callback inbox as /metrics shows it: read from the database at each scrape. */
export interface CallbackInboxBacklog {
  /** Callbacks kept and not yet applied or parked (status RECEIVED). */
  received: number;
  /** Age of the oldest of them; 0 when there is none. */
  oldestAgeSeconds: number;
  /** PARKED callbacks (an operator's to redrive) by kind. */
  parkedByKind: Record<string, number>;
}

let inboxSource: (() => Promise<CallbackInboxBacklog>) | undefined;

/** The process that serves /metrics for the inbox (the API) gives the gauges their source. */
export function watchCallbackInbox(source: () => Promise<CallbackInboxBacklog>): void {
  inboxSource = source;
}

const inboxBacklog = new Gauge({
  name: 'pixflow_callback_inbox_backlog',
  help: 'Acquirer callbacks kept and not yet applied or parked (status RECEIVED)',
  registers: [metricsRegistry],
});
const inboxOldestAge = new Gauge({
  name: 'pixflow_callback_inbox_oldest_age_seconds',
  help: 'Age of the oldest acquirer callback not yet applied or parked; 0 when none waits',
  registers: [metricsRegistry],
});
const inboxParked = new Gauge({
  name: 'pixflow_callback_inbox_parked',
  help: 'Parked acquirer callbacks by kind (docs/operations.md "A callback parked")',
  labelNames: ['kind'] as const,
  registers: [metricsRegistry],
});

/** One database read per scrape sets the three inbox gauges; a failed read leaves the last values. */
async function refreshInbox(): Promise<void> {
  if (!inboxSource) return;
  const b = await inboxSource().catch(() => undefined);
  if (!b) return;
  inboxBacklog.set(b.received);
  inboxOldestAge.set(b.oldestAgeSeconds);
  inboxParked.reset();
  for (const [kind, n] of Object.entries(b.parkedByKind)) inboxParked.set({ kind }, n);
}

const acquirerDuration = new Histogram({
  name: 'pixflow_acquirer_request_duration_seconds',
  help: 'Acquirer API calls by operation (createCob, sendTransfer, oauthToken, ...) and outcome (ok, error)',
  labelNames: ['operation', 'outcome'] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [metricsRegistry],
});
const acquirerErrors = new Counter({
  name: 'pixflow_acquirer_errors_total',
  help: 'Failed acquirer API calls by operation and kind (the AcquirerError code, lowercase: timeout, network, unavailable, ...)',
  labelNames: ['operation', 'kind'] as const,
  registers: [metricsRegistry],
});

/** One acquirer API call: `kind` is undefined when it succeeded, else its AcquirerError code. */
export function recordAcquirerCall(operation: string, seconds: number, kind?: string): void {
  acquirerDuration.observe({ operation, outcome: kind === undefined ? 'ok' : 'error' }, seconds);
  if (kind !== undefined) acquirerErrors.inc({ operation, kind: kind.toLowerCase() });
}

/** A refund's step: requested by a merchant, then confirmed or failed; `kind` is the refund's kind. */
export type RefundOutcome = 'requested' | 'confirmed' | 'failed';
const refunds = new Counter({
  name: 'pixflow_refunds_total',
  help: 'Refunds (devolucoes) by outcome (requested, confirmed, failed) and kind (merchant, unpayable_payment, infraction)',
  labelNames: ['outcome', 'kind'] as const,
  registers: [metricsRegistry],
});

/** Counted after the transaction that applied it committed, once per refund and outcome. */
export function recordRefund(outcome: RefundOutcome, kind: string): void {
  refunds.inc({ outcome, kind: kind.toLowerCase() });
}

/** An infraction's step (docs/operations.md "MED infractions"). */
export type InfractionOutcome = 'received' | 'rejected' | 'accepted' | 'refunded' | 'refund_refused' | 'released';
const infractions = new Counter({
  name: 'pixflow_infractions_total',
  help: 'MED infractions by outcome: received, rejected, accepted, refunded, refund_refused, released (by an operator)',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});

/** Counted after the transaction that applied it committed. */
export function recordInfraction(outcome: InfractionOutcome): void {
  infractions.inc({ outcome });
}

const webhookLatency = new Histogram({
  name: 'pixflow_webhook_delivery_latency_seconds',
  help: "Time from a domain event to its webhook's 2xx, retries included",
  buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600],
  registers: [metricsRegistry],
});

/** A delivery answered 2xx; `seconds` since its event was recorded. */
export function recordWebhookDelivered(seconds: number): void {
  webhookLatency.observe(Math.max(0, seconds));
}

/** The Prometheus text exposition of every metric above. */
export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  await refreshInbox();
  return { contentType: metricsRegistry.contentType, body: await metricsRegistry.metrics() };
}

/** Whether an Authorization header carries METRICS_TOKEN (compared in constant time). */
export function metricsTokenMatches(authorization: string | undefined, token: string): boolean {
  const given = /^Bearer (.+)$/i.exec(authorization ?? '')?.[1] ?? '';
  const digest = (v: string): Buffer => crypto.createHash('sha256').update(v).digest();
  return crypto.timingSafeEqual(digest(given), digest(token));
}
