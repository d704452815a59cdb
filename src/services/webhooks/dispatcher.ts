/**
 * Starts the workflows of committed webhook deliveries (docs/api.md "Webhooks"). Deliveries are written
 * as an outbox in the transaction of the event; this turns each into a running
 * `webhook-delivery-<id>` workflow:
 *
 * - woken by PostgreSQL's NOTIFY (sent only on commit) and, as a safety net, every few seconds,
 *   it starts every PENDING delivery whose workflow was not started yet and marks it started;
 * - at start and every few minutes, the reconciler starts a workflow for every PENDING delivery,
 *   started or not: a start of a running id changes nothing, so this only restores runs that were
 *   lost (an in-memory Temporal after a restart) or a redelivery that raced its old run's end.
 *
 * A process that dies between a delivery's commit and its workflow start leaves the row unstarted;
 * whichever API process polls next starts it. Nothing here holds a lock: two dispatchers may start
 * the same delivery, and the second start is a no-op.
 */
import type { Knex } from 'knex';
import type { Client as PgClient } from 'pg';
import type { Logger } from '../../lib/logger';
import type { WebhookDeliveryWorkflows } from '../../temporal/clients/webhook';
import { DELIVERY_CHANNEL, webhooksStore, type PendingDelivery } from '../../stores/webhooks';
import { withTraceparent } from '../../observability/tracing';

type PendingRow = PendingDelivery;

export interface WebhookDispatcherDeps {
  knex: Knex;
  workflows: WebhookDeliveryWorkflows;
  logger: Logger;
  /** Safety-net poll of unstarted deliveries (NOTIFY normally wakes the dispatcher at once). */
  pollIntervalMs?: number;
  /** Full pass over every PENDING delivery. */
  reconcileIntervalMs?: number;
  batchSize?: number;
  /** Starts at once in parallel, per batch. */
  parallelism?: number;
}

export function createWebhookDispatcher(deps: WebhookDispatcherDeps) {
  const { knex, workflows, logger } = deps;
  const batchSize = deps.batchSize ?? 200;
  const parallelism = deps.parallelism ?? 8;
  let stopped = false;
  let dispatching: Promise<void> | null = null;
  let dispatchAgain = false;
  let reconciling: Promise<unknown> = Promise.resolve();
  let listener: PgClient | null = null;
  let reconnectTimer: NodeJS.Timeout | null = null;
  const timers: NodeJS.Timeout[] = [];

  const markStarted = async (id: string): Promise<void> => {
    await webhooksStore(knex).markWorkflowStarted(id);
  };

  async function startEach(rows: PendingRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += parallelism) {
      await Promise.all(
        rows.slice(i, i + parallelism).map(async (r) => {
          // Marked only when this start created the run. An id already running is either being
          // marked by whoever started it, or is the previous run of a redelivered delivery still
          // closing: the row stays unmarked and the next poll starts the new run once it can.
          // In the trace of the work that recorded the event (docs/operations.md "Tracing").
          const started = await withTraceparent(r.traceparent, () =>
            workflows.start({ deliveryId: r.id, merchantId: r.merchant_id, firstAttempt: r.attempts + 1 }),
          );
          if (started) await markStarted(r.id);
        }),
      );
    }
  }

  /** Starts the workflow of every committed delivery not started yet. Returns how many. */
  async function dispatchPending(): Promise<number> {
    let total = 0;
    for (;;) {
      const rows = await webhooksStore(knex).unstarted(batchSize);
      await startEach(rows);
      total += rows.length;
      if (rows.length < batchSize || stopped) return total;
    }
  }

  /** Coalesces wake-ups: one pass at a time, and one more if woken during it. */
  function kick(): void {
    if (stopped) return;
    if (dispatching) {
      dispatchAgain = true;
      return;
    }
    dispatching = (async () => {
      do {
        dispatchAgain = false;
        try {
          await dispatchPending();
        } catch (err) {
          logger.error({ err }, 'webhook dispatch failed; the next poll retries');
        }
      } while (dispatchAgain && !stopped);
      dispatching = null;
    })();
  }

  /** Starts (idempotently) the workflow of every PENDING delivery. Returns how many were new. */
  async function reconcile(): Promise<number> {
    let after = '';
    let restarted = 0;
    for (;;) {
      const rows = await webhooksStore(knex).pendingAfter(after, batchSize);
      for (const r of rows) {
        const start = () =>
          workflows.start({ deliveryId: r.id, merchantId: r.merchant_id, firstAttempt: r.attempts + 1 });
        if (await withTraceparent(r.traceparent, start)) {
          await markStarted(r.id);
          restarted++;
        }
      }
      if (rows.length < batchSize || stopped) break;
      after = (rows[rows.length - 1] as PendingRow).id;
    }
    if (restarted > 0) logger.info({ deliveries: restarted }, 'webhook delivery workflows reconciled');
    return restarted;
  }

  async function listen(): Promise<void> {
    const conn = (await knex.client.acquireRawConnection()) as PgClient;
    const lost = (err?: unknown): void => {
      if (listener !== conn) return;
      listener = null;
      if (err) logger.warn({ err }, 'webhook dispatcher lost its LISTEN connection; reconnecting');
      void knex.client.destroyRawConnection(conn).catch(() => undefined);
      if (!stopped) reconnectTimer = setTimeout(() => void listen().catch((e: unknown) => lost(e)), 1000);
    };
    conn.on('notification', () => kick());
    conn.on('error', (err) => lost(err));
    conn.on('end', () => lost());
    listener = conn;
    await conn.query(`LISTEN ${DELIVERY_CHANNEL}`);
    // Anything committed before LISTEN took effect is picked up now.
    kick();
  }

  return {
    dispatchPending,
    reconcile,
    kick,
    /** LISTEN, poll and reconcile in the background until stop(). */
    async start(): Promise<void> {
      try {
        await listen();
      } catch (err) {
        logger.warn({ err }, 'webhook dispatcher could not LISTEN; relying on its poll');
      }
      const runReconcile = (): void => {
        reconciling = reconcile().catch((err: unknown) =>
          logger.error({ err }, 'webhook delivery reconciliation failed'),
        );
      };
      runReconcile();
      timers.push(
        setInterval(kick, deps.pollIntervalMs ?? 5_000),
        setInterval(runReconcile, deps.reconcileIntervalMs ?? 5 * 60_000),
      );
      for (const t of timers) t.unref();
    },
    async stop(): Promise<void> {
      stopped = true;
      for (const t of timers) clearInterval(t);
      if (reconnectTimer) clearTimeout(reconnectTimer);
      const conn = listener;
      listener = null;
      if (conn) await knex.client.destroyRawConnection(conn).catch(() => undefined);
      await dispatching;
      await reconciling;
    },
  };
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>;
