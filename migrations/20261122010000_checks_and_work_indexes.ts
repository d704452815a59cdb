/**
 * Completes the first migration without rewriting it (databases already created by `npm start`
 * keep working): the remaining range checks on amounts and counters, the index that reads a
 * delivery's attempt log, and partial indexes over the non-terminal rows that the reconciler and
 * the settlement sweep scan (docs/architecture.md: every non-terminal entity has exactly one workflow).
 */
import type { Knex } from 'knex';

const CHECKS: Array<[table: string, name: string, condition: string]> = [
  ['charges', 'charges_fee_amount_check', 'fee_amount is null or fee_amount between 0 and amount'],
  ['infractions', 'infractions_amount_check', 'amount >= 1'],
  ['infractions', 'infractions_blocked_amount_check', 'blocked_amount between 0 and amount'],
  ['webhook_deliveries', 'webhook_deliveries_attempts_check', 'attempts >= 0'],
  ['webhook_delivery_logs', 'webhook_delivery_logs_attempt_check', 'attempt >= 1'],
];

const INDEXES: Array<[name: string, definition: string]> = [
  ['webhook_delivery_logs_delivery_idx', 'webhook_delivery_logs (delivery_id, attempt)'],
  ['withdrawals_processing_idx', `withdrawals (created_at) where status = 'PROCESSING'`],
  ['webhook_deliveries_pending_idx', `webhook_deliveries (created_at) where status = 'PENDING'`],
  ['infractions_open_idx', `infractions (created_at) where status in ('OPEN', 'ACCEPTED')`],
  ['charge_refunds_requested_idx', `charge_refunds (created_at) where status = 'REQUESTED'`],
  ['charges_unsettled_idx', `charges (settle_at) where status = 'PAID' and settled_at is null`],
];

export async function up(knex: Knex): Promise<void> {
  for (const [table, name, condition] of CHECKS) {
    await knex.raw(`alter table ${table} add constraint ${name} check (${condition})`);
  }
  for (const [name, definition] of INDEXES) {
    await knex.raw(`create index ${name} on ${definition}`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const [name] of [...INDEXES].reverse()) {
    await knex.raw(`drop index if exists ${name}`);
  }
  for (const [table, name] of [...CHECKS].reverse()) {
    await knex.raw(`alter table ${table} drop constraint if exists ${name}`);
  }
}
