/**
 * Two things that let hot reads skip work without going stale (README "Where a charge's time goes"):
 *
 * - `pixflow_cache` notifications: any change to what authentication or charge prerequisites read
 *   (an API key deleted or its status changed; a user's status, role, merchant or token version; a
 *   merchant's status, KYC or acquirer account; any PIX key) sends a NOTIFY from a trigger, in the
 *   writer's own transaction, so it is delivered exactly when the change commits — whoever wrote it
 *   (the API, the ops CLI, psql). Every process drops its caches on it.
 * - `charge_counts`: how many charges a merchant has per status, kept by a trigger in the same
 *   transaction as every insert, status change and delete of a charge, so the list's `total` is a
 *   few-row sum instead of a count over the merchant's whole history. Eight shards per (merchant,
 *   status), picked by the charge id, so concurrent creations for one merchant rarely wait on one row.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create function pixflow_notify_cache() returns trigger language plpgsql as $$
    begin
      perform pg_notify('pixflow_cache', tg_table_name);
      return null;
    end $$`);
  await knex.raw(`create trigger api_keys_cache_update after update on api_keys for each row
    when (old.status is distinct from new.status or old.key_hash is distinct from new.key_hash
          or old.merchant_id is distinct from new.merchant_id)
    execute function pixflow_notify_cache()`);
  await knex.raw(`create trigger users_cache_update after update on users for each row
    when (old.status is distinct from new.status or old.token_version is distinct from new.token_version
          or old.role is distinct from new.role or old.merchant_id is distinct from new.merchant_id)
    execute function pixflow_notify_cache()`);
  await knex.raw(`create trigger merchants_cache_update after update on merchants for each row
    when (old.status is distinct from new.status or old.kyc_status is distinct from new.kyc_status
          or old.acquirer_account_id is distinct from new.acquirer_account_id)
    execute function pixflow_notify_cache()`);
  for (const table of ['api_keys', 'users', 'merchants']) {
    await knex.raw(
      `create trigger ${table}_cache_delete after delete on ${table} for each statement execute function pixflow_notify_cache()`,
    );
  }
  await knex.raw(`create trigger pix_keys_cache_change after insert or update or delete on pix_keys
    for each statement execute function pixflow_notify_cache()`);
  for (const table of ['api_keys', 'users', 'merchants', 'pix_keys']) {
    await knex.raw(
      `create trigger ${table}_cache_truncate after truncate on ${table} for each statement execute function pixflow_notify_cache()`,
    );
  }

  await knex.raw(`create table charge_counts (
    merchant_id text not null,
    status text not null,
    shard smallint not null,
    n bigint not null,
    primary key (merchant_id, status, shard)
  )`);
  // Inserts and deletes: once per statement over its transition table, one upsert per (merchant,
  // status, shard) it touched, so a bulk insert costs a handful of upserts. Status changes: per
  // row, only when the status (or merchant) changed, so the many other updates of a charge cost
  // nothing.
  await knex.raw(`create function pixflow_count_inserted_charges() returns trigger language plpgsql as $$
    begin
      insert into charge_counts (merchant_id, status, shard, n)
        select merchant_id, status, hashtext(id) & 7, count(*) from new_rows group by 1, 2, 3
        on conflict (merchant_id, status, shard) do update set n = charge_counts.n + excluded.n;
      return null;
    end $$`);
  await knex.raw(`create function pixflow_count_deleted_charges() returns trigger language plpgsql as $$
    begin
      update charge_counts c set n = c.n - d.n
        from (select merchant_id, status, hashtext(id) & 7 as shard, count(*) as n from old_rows group by 1, 2, 3) d
        where c.merchant_id = d.merchant_id and c.status = d.status and c.shard = d.shard;
      return null;
    end $$`);
  await knex.raw(`create function pixflow_count_charge_status() returns trigger language plpgsql as $$
    begin
      update charge_counts set n = n - 1
        where merchant_id = old.merchant_id and status = old.status and shard = (hashtext(old.id) & 7);
      insert into charge_counts (merchant_id, status, shard, n) values (new.merchant_id, new.status, hashtext(new.id) & 7, 1)
        on conflict (merchant_id, status, shard) do update set n = charge_counts.n + 1;
      return null;
    end $$`);
  await knex.raw(`create trigger charges_count_insert after insert on charges
    referencing new table as new_rows for each statement execute function pixflow_count_inserted_charges()`);
  await knex.raw(`create trigger charges_count_delete after delete on charges
    referencing old table as old_rows for each statement execute function pixflow_count_deleted_charges()`);
  await knex.raw(`create trigger charges_count_status after update of status, merchant_id on charges
    for each row when (old.status is distinct from new.status or old.merchant_id is distinct from new.merchant_id)
    execute function pixflow_count_charge_status()`);
  // A truncate of charges empties the counts with it.
  await knex.raw(`create function pixflow_truncate_charge_counts() returns trigger language plpgsql as $$
    begin
      truncate charge_counts;
      return null;
    end $$`);
  await knex.raw(`create trigger charges_count_truncate after truncate on charges
    for each statement execute function pixflow_truncate_charge_counts()`);
  await knex.raw(`insert into charge_counts (merchant_id, status, shard, n)
    select merchant_id, status, hashtext(id) & 7, count(*) from charges group by 1, 2, 3`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists charges_count_truncate on charges');
  await knex.raw('drop trigger if exists charges_count_status on charges');
  await knex.raw('drop trigger if exists charges_count_delete on charges');
  await knex.raw('drop trigger if exists charges_count_insert on charges');
  await knex.raw('drop function if exists pixflow_truncate_charge_counts()');
  await knex.raw('drop function if exists pixflow_count_charge_status()');
  await knex.raw('drop function if exists pixflow_count_deleted_charges()');
  await knex.raw('drop function if exists pixflow_count_inserted_charges()');
  await knex.raw('drop table if exists charge_counts');
  for (const t of ['api_keys_cache_update', 'users_cache_update', 'merchants_cache_update']) {
    await knex.raw(`drop trigger if exists ${t} on ${t.replace('_cache_update', '')}`);
  }
  for (const table of ['api_keys', 'users', 'merchants'])
    await knex.raw(`drop trigger if exists ${table}_cache_delete on ${table}`);
  await knex.raw('drop trigger if exists pix_keys_cache_change on pix_keys');
  for (const table of ['api_keys', 'users', 'merchants', 'pix_keys'])
    await knex.raw(`drop trigger if exists ${table}_cache_truncate on ${table}`);
  await knex.raw('drop function if exists pixflow_notify_cache()');
}
