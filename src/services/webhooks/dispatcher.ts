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
 * A payment's `charge.paid` deliveries send no NOTIFY: the worker starts them right after the
 * payment commits, by the same rule (./start.ts), and for them the poll and the reconciler are the
 * safety net (docs/performance.md "Payment to webhook: the timeline").
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
import { startDelivery } from './start';

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

export function createWebhookDispatcher(deps: WebhookDispatcherDeps): WebhookDispatcher {
  return new WebhookDispatcher(deps);
}

/** The dispatcher's state is its own: one pass at a time, its LISTEN connection, its timers. */
export class WebhookDispatcher {
  private readonly batchSize: number;
  private readonly parallelism: number;
  private stopped = false;
  private dispatching: Promise<void> | null = null;
  private dispatchAgain = false;
  private reconciling: Promise<unknown> = Promise.resolve();
  private listener: PgClient | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(private readonly deps: WebhookDispatcherDeps) {
    this.batchSize = deps.batchSize ?? 200;
    this.parallelism = deps.parallelism ?? 8;
  }

  /** Starts the workflow of every committed delivery not started yet. Returns how many. */
  async dispatchPending(): Promise<number> {
    let total = 0;
    for (;;) {
      const rows = await webhooksStore(this.deps.knex).unstarted(this.batchSize);
      await this.startEach(rows);
      total += rows.length;
      if (rows.length < this.batchSize || this.stopped) return total;
    }
  }

  /** Coalesces wake-ups: one pass at a time, and one more if woken during it. */
  kick(): void {
    if (this.stopped) return;
    if (this.dispatching) {
      this.dispatchAgain = true;
      return;
    }
    this.dispatching = (async () => {
      do {
        this.dispatchAgain = false;
        try {
          await this.dispatchPending();
        } catch (err) {
          this.deps.logger.error({ err }, 'webhook dispatch failed; the next poll retries');
        }
      } while (this.dispatchAgain && !this.stopped);
      this.dispatching = null;
    })();
  }

  /** Starts (idempotently) the workflow of every PENDING delivery. Returns how many were new. */
  async reconcile(): Promise<number> {
    let after = '';
    let restarted = 0;
    for (;;) {
      const rows = await webhooksStore(this.deps.knex).pendingAfter(after, this.batchSize);
      for (const r of rows) if (await this.startOne(r)) restarted++;
      if (rows.length < this.batchSize || this.stopped) break;
      after = (rows[rows.length - 1] as PendingRow).id;
    }
    if (restarted > 0) this.deps.logger.info({ deliveries: restarted }, 'webhook delivery workflows reconciled');
    return restarted;
  }

  /** LISTEN, poll and reconcile in the background until stop(). */
  async start(): Promise<void> {
    try {
      await this.listen();
    } catch (err) {
      this.deps.logger.warn({ err }, 'webhook dispatcher could not LISTEN; relying on its poll');
    }
    const runReconcile = (): void => {
      this.reconciling = this.reconcile().catch((err: unknown) =>
        this.deps.logger.error({ err }, 'webhook delivery reconciliation failed'),
      );
    };
    runReconcile();
    this.timers.push(
      setInterval(() => this.kick(), this.deps.pollIntervalMs ?? 5_000),
      setInterval(runReconcile, this.deps.reconcileIntervalMs ?? 5 * 60_000),
    );
    for (const t of this.timers) t.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const conn = this.listener;
    this.listener = null;
    if (conn) await this.deps.knex.client.destroyRawConnection(conn).catch(() => undefined);
    await this.dispatching;
    await this.reconciling;
  }

  private async startEach(rows: PendingRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += this.parallelism) {
      await Promise.all(rows.slice(i, i + this.parallelism).map((r) => this.startOne(r)));
    }
  }

  /** Started and marked by the rule the payment path shares (./start.ts). */
  private startOne(r: PendingRow): Promise<boolean> {
    return startDelivery(this.deps.knex, this.deps.workflows, r);
  }

  private async listen(): Promise<void> {
    const { knex, logger } = this.deps;
    const conn = (await knex.client.acquireRawConnection()) as PgClient;
    const lost = (err?: unknown): void => {
      if (this.listener !== conn) return;
      this.listener = null;
      if (err) logger.warn({ err }, 'webhook dispatcher lost its LISTEN connection; reconnecting');
      void knex.client.destroyRawConnection(conn).catch(() => undefined);
      if (!this.stopped)
        this.reconnectTimer = setTimeout(() => void this.listen().catch((e: unknown) => lost(e)), 1000);
    };
    conn.on('notification', () => this.kick());
    conn.on('error', (err) => lost(err));
    conn.on('end', () => lost());
    this.listener = conn;
    await conn.query(`LISTEN ${DELIVERY_CHANNEL}`);
    // Anything committed before LISTEN took effect is picked up now.
    this.kick();
  }
}
