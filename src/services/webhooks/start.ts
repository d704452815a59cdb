/**
 * Starting one committed delivery's `webhook-delivery-<id>` workflow and marking it started: the
 * one rule the dispatcher (./dispatcher.ts) and the process that recorded a payment (the charge
 * lifecycle, right after its commit) share (docs/performance.md "Payment to webhook: the timeline").
 */
import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger';
import type { WebhookDeliveryWorkflows } from '../../../workflows/webhook-delivery-types';
import { webhooksStore, type PendingDelivery } from '../../stores/webhooks';
import { withTraceparent } from '../../observability/tracing';

/**
 * Marked only when this start created the run. An id already running is either being marked by
 * whoever started it, or is the previous run of a redelivered delivery still closing: the row
 * stays unmarked and the dispatcher's next poll starts the new run once it can. In the trace of the
 * work that recorded the event (docs/operations.md "Tracing").
 */
export async function startDelivery(
  knex: Knex,
  workflows: WebhookDeliveryWorkflows,
  d: PendingDelivery,
): Promise<boolean> {
  const started = await withTraceparent(d.traceparent, () =>
    workflows.start({ deliveryId: d.id, merchantId: d.merchant_id, firstAttempt: d.attempts + 1 }),
  );
  if (started) await webhooksStore(knex).markWorkflowStarted(d.id);
  return started;
}

/**
 * Starts deliveries whose transaction has committed, never throwing: what was committed stands
 * whether or not a start succeeds, and a delivery left unstarted (a failed start, a process that
 * died first) is started by the dispatcher's poll and reconciler.
 */
export async function startCommittedDeliveries(
  deps: { knex: Knex; workflows: WebhookDeliveryWorkflows; logger: Logger },
  deliveries: readonly PendingDelivery[],
): Promise<void> {
  await Promise.all(
    deliveries.map((d) =>
      startDelivery(deps.knex, deps.workflows, d).catch((err: unknown) =>
        deps.logger.warn({ err, deliveryId: d.id }, 'webhook delivery start failed; the dispatcher starts it'),
      ),
    ),
  );
}
