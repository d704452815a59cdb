/**
 * Two things for the API's edges:
 *
 * - `request_hash` on `charges`, `withdrawals` and `idempotency_keys`: the SHA-256 of the
 *   canonical JSON of the validated request an idempotency key was first used with, so the same key
 *   with another body is a 422 instead of a replay (README "Idempotent refunds and adjustments").
 *   Null on rows written before it existed (and on charges and withdrawals made without a key):
 *   such a key replays whatever the body says, as it did.
 * - `list_counts`: how many withdrawals a merchant has and how many deliveries a webhook has, kept
 *   by triggers in the same transaction as every insert and delete, so those lists read their
 *   `total` as a few-row sum instead of counting the whole history on every request (README
 *   "Pagination limits"). Eight shards per owner, picked by the row id, as `charge_counts`, so
 *   concurrent inserts for one owner rarely wait on one row.
 */
import type { Knex } from 'knex';

/** The lists counted, with the column that owns a row of each. */
const LISTS = [
  { table: 'withdrawals', list: 'withdrawals', owner: 'merchant_id' },
  { table: 'webhook_deliveries', list: 'webhook_deliveries', owner: 'webhook_id' },
] as const;

export async function up(knex: Knex): Promise<void> {
  for (const table of ['charges', 'withdrawals', 'idempotency_keys']) {
    await knex.raw(`alter table ${table} add column request_hash bytea`);
  }

  await knex.raw(`create table list_counts (
    list text not null,
    owner_id text not null,
    shard smallint not null,
    n bigint not null,
    primary key (list, owner_id, shard)
  )`);
  for (const { table, list, owner } of LISTS) {
    // Once per statement over its transition table, like `charge_counts`.
    await knex.raw(`create function pixflow_count_inserted_${table}() returns trigger language plpgsql as $$
      begin
        insert into list_counts (list, owner_id, shard, n)
          select '${list}', ${owner}, hashtext(id) & 7, count(*) from new_rows group by 2, 3
          on conflict (list, owner_id, shard) do update set n = list_counts.n + excluded.n;
        return null;
      end $$`);
    await knex.raw(`create function pixflow_count_deleted_${table}() returns trigger language plpgsql as $$
      begin
        update list_counts c set n = c.n - d.n
          from (select ${owner} as owner_id, hashtext(id) & 7 as shard, count(*) as n from old_rows group by 1, 2) d
          where c.list = '${list}' and c.owner_id = d.owner_id and c.shard = d.shard;
        return null;
      end $$`);
    // The owner of a row never changes (no code path moves one); a truncate empties its list.
    await knex.raw(`create function pixflow_truncate_${table}_counts() returns trigger language plpgsql as $$
      begin
        delete from list_counts where list = '${list}';
        return null;
      end $$`);
    await knex.raw(`create trigger ${table}_list_count_insert after insert on ${table}
      referencing new table as new_rows for each statement execute function pixflow_count_inserted_${table}()`);
    await knex.raw(`create trigger ${table}_list_count_delete after delete on ${table}
      referencing old table as old_rows for each statement execute function pixflow_count_deleted_${table}()`);
    await knex.raw(`create trigger ${table}_list_count_truncate after truncate on ${table}
      for each statement execute function pixflow_truncate_${table}_counts()`);
    await knex.raw(`insert into list_counts (list, owner_id, shard, n)
      select '${list}', ${owner}, hashtext(id) & 7, count(*) from ${table} group by 2, 3`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const { table } of LISTS) {
    for (const t of ['insert', 'delete', 'truncate'])
      await knex.raw(`drop trigger if exists ${table}_list_count_${t} on ${table}`);
    await knex.raw(`drop function if exists pixflow_count_inserted_${table}()`);
    await knex.raw(`drop function if exists pixflow_count_deleted_${table}()`);
    await knex.raw(`drop function if exists pixflow_truncate_${table}_counts()`);
  }
  await knex.raw('drop table if exists list_counts');
  for (const table of ['charges', 'withdrawals', 'idempotency_keys']) {
    await knex.raw(`alter table ${table} drop column if exists request_hash`);
  }
}
