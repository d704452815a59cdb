/**
 * The merchant profile (`GET /v1/merchants/me`) is cached per process like the charge
 * prerequisites (README "Where a read's time goes"), so every change to a merchant row must reach
 * the `pixflow_cache` listeners — not only its status, KYC and acquirer account: also its name and
 * fees. Merchant updates are rare (operator actions), so one notification per changed row costs
 * nothing that matters.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists merchants_cache_update on merchants');
  await knex.raw(`create trigger merchants_cache_update after update on merchants for each row
    when (old.* is distinct from new.*)
    execute function pixflow_notify_cache()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists merchants_cache_update on merchants');
  await knex.raw(`create trigger merchants_cache_update after update on merchants for each row
    when (old.status is distinct from new.status or old.kyc_status is distinct from new.kyc_status
          or old.acquirer_account_id is distinct from new.acquirer_account_id)
    execute function pixflow_notify_cache()`);
}
