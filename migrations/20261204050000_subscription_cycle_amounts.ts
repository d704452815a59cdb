/**
 * Variable subscriptions (docs/api.md "Variable amounts"): the merchant sets a cycle's amount ahead,
 * a `subscription_cycles` row in SCHEDULED with no charge yet; a variable cycle that reaches its
 * cobr's day with no amount is SKIPPED (amount 0, no charge, nothing debited).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table subscription_cycles drop constraint subscription_cycles_status_check');
  await knex.raw(`alter table subscription_cycles add constraint subscription_cycles_status_check
    check (status in ('SCHEDULED', 'PENDING', 'PAID', 'FAILED', 'CANCELED', 'SKIPPED'))`);
  await knex.raw('alter table subscription_cycles drop constraint subscription_cycles_amount_check');
  await knex.raw(`alter table subscription_cycles add constraint subscription_cycles_amount_check
    check (amount > 0 or (status = 'SKIPPED' and amount = 0))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`delete from subscription_cycles where status = 'SKIPPED'`);
  await knex.raw('alter table subscription_cycles drop constraint subscription_cycles_amount_check');
  await knex.raw('alter table subscription_cycles add constraint subscription_cycles_amount_check check (amount > 0)');
  await knex.raw('alter table subscription_cycles drop constraint subscription_cycles_status_check');
  await knex.raw(`alter table subscription_cycles add constraint subscription_cycles_status_check
    check (status in ('SCHEDULED', 'PENDING', 'PAID', 'FAILED', 'CANCELED'))`);
}
