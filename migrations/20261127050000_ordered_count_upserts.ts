/**
 * The list counts' insert triggers (`charge_counts`, `charge_hour_counts`, `list_counts`) upsert
 * their shard rows in key order (the second-long stall in docs/performance.md "Where a charge's
 * time goes"). Before, each upserted them in its hash aggregate's order, which changes with the
 * number of rows a statement inserts: concurrent batches of one owner locked shared shard rows in
 * opposite orders and deadlocked, and PostgreSQL held them all for `deadlock_timeout` (1 s) before
 * aborting one, a second-long stall for every request behind them. One order for everyone leaves
 * no cycle.
 */
import type { Knex } from 'knex';

/** The functions as they were and as they are, differing only in the `order by`. */
function definitions(ordered: boolean): string[] {
  const by = (keys: string): string => (ordered ? ` order by ${keys}` : '');
  const lists = [
    { table: 'withdrawals', list: 'withdrawals', owner: 'merchant_id' },
    { table: 'webhook_deliveries', list: 'webhook_deliveries', owner: 'webhook_id' },
  ];
  return [
    `create or replace function pixflow_count_inserted_charges() returns trigger language plpgsql as $$
    begin
      insert into charge_counts (merchant_id, status, shard, n)
        select merchant_id, status, hashtext(id) & 7, count(*) from new_rows group by 1, 2, 3${by('1, 2, 3')}
        on conflict (merchant_id, status, shard) do update set n = charge_counts.n + excluded.n;
      return null;
    end $$`,
    `create or replace function pixflow_count_inserted_charge_hours() returns trigger language plpgsql as $$
    begin
      insert into charge_hour_counts (merchant_id, status, hour, shard, n)
        select merchant_id, status, date_trunc('hour', created_at, 'UTC'), hashtext(id) & 7, count(*)
          from new_rows group by 1, 2, 3, 4${by('1, 2, 3, 4')}
        on conflict (merchant_id, status, hour, shard) do update set n = charge_hour_counts.n + excluded.n;
      return null;
    end $$`,
    ...lists.map(
      ({
        table,
        list,
        owner,
      }) => `create or replace function pixflow_count_inserted_${table}() returns trigger language plpgsql as $$
      begin
        insert into list_counts (list, owner_id, shard, n)
          select '${list}', ${owner}, hashtext(id) & 7, count(*) from new_rows group by 2, 3${by('2, 3')}
          on conflict (list, owner_id, shard) do update set n = list_counts.n + excluded.n;
        return null;
      end $$`,
    ),
  ];
}

export async function up(knex: Knex): Promise<void> {
  for (const sql of definitions(true)) await knex.raw(sql);
}

export async function down(knex: Knex): Promise<void> {
  for (const sql of definitions(false)) await knex.raw(sql);
}
