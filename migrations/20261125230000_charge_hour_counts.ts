/**
 * Deep pages of the charge list without walking the pages before them (README "Where a read's time
 * goes", Deep pages).
 *
 * - `charge_hour_counts`: how many charges a merchant has per status per hour of creation (UTC),
 *   in eight shards per (merchant, status, hour) like `charge_counts`, kept by triggers in the same
 *   transaction as every insert, delete and change of a charge's status, merchant or creation time.
 * - `pixflow_charge_page_start(merchant, status, offset)`: from those counts, newest hour first,
 *   the hour in which the charge at `offset` (newest first) was created, as the instant that hour
 *   ends, and how many of the merchant's charges (of that status) come before it in the list, i.e.
 *   were created at or after that instant. The page is then an index seek to that instant and a
 *   walk of at most one hour's charges instead of `offset` index entries. Past the last charge it
 *   answers `-infinity`, so such a page is empty at once. STABLE: its reads share the snapshot of
 *   the statement that calls it, so the counts and the page agree exactly.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create table charge_hour_counts (
    merchant_id text not null,
    status text not null,
    hour timestamptz not null,
    shard smallint not null,
    n bigint not null
  )`);
  // The key, in the order a status-filtered list reads it (newest hour first); the unfiltered list
  // reads every status of a merchant newest hour first. A loop over either stops at the page's
  // hour, so a deep page reads the counts of the hours before it, not of the merchant's history.
  await knex.raw(
    'create unique index charge_hour_counts_key on charge_hour_counts (merchant_id, status, hour desc, shard)',
  );
  await knex.raw('create index charge_hour_counts_merchant_hour_idx on charge_hour_counts (merchant_id, hour desc)');

  await knex.raw(`create function pixflow_count_inserted_charge_hours() returns trigger language plpgsql as $$
    begin
      insert into charge_hour_counts (merchant_id, status, hour, shard, n)
        select merchant_id, status, date_trunc('hour', created_at, 'UTC'), hashtext(id) & 7, count(*)
          from new_rows group by 1, 2, 3, 4
        on conflict (merchant_id, status, hour, shard) do update set n = charge_hour_counts.n + excluded.n;
      return null;
    end $$`);
  await knex.raw(`create function pixflow_count_deleted_charge_hours() returns trigger language plpgsql as $$
    begin
      update charge_hour_counts c set n = c.n - d.n
        from (select merchant_id, status, date_trunc('hour', created_at, 'UTC') as hour, hashtext(id) & 7 as shard, count(*) as n
                from old_rows group by 1, 2, 3, 4) d
        where c.merchant_id = d.merchant_id and c.status = d.status and c.hour = d.hour and c.shard = d.shard;
      return null;
    end $$`);
  await knex.raw(`create function pixflow_count_changed_charge_hour() returns trigger language plpgsql as $$
    begin
      update charge_hour_counts set n = n - 1
        where merchant_id = old.merchant_id and status = old.status
          and hour = date_trunc('hour', old.created_at, 'UTC') and shard = (hashtext(old.id) & 7);
      insert into charge_hour_counts (merchant_id, status, hour, shard, n)
        values (new.merchant_id, new.status, date_trunc('hour', new.created_at, 'UTC'), hashtext(new.id) & 7, 1)
        on conflict (merchant_id, status, hour, shard) do update set n = charge_hour_counts.n + 1;
      return null;
    end $$`);
  await knex.raw(`create function pixflow_truncate_charge_hour_counts() returns trigger language plpgsql as $$
    begin
      truncate charge_hour_counts;
      return null;
    end $$`);
  await knex.raw(`create trigger charges_hour_count_insert after insert on charges
    referencing new table as new_rows for each statement execute function pixflow_count_inserted_charge_hours()`);
  await knex.raw(`create trigger charges_hour_count_delete after delete on charges
    referencing old table as old_rows for each statement execute function pixflow_count_deleted_charge_hours()`);
  await knex.raw(`create trigger charges_hour_count_change after update of status, merchant_id, created_at on charges
    for each row when (old.status is distinct from new.status or old.merchant_id is distinct from new.merchant_id
                       or old.created_at is distinct from new.created_at)
    execute function pixflow_count_changed_charge_hour()`);
  await knex.raw(`create trigger charges_hour_count_truncate after truncate on charges
    for each statement execute function pixflow_truncate_charge_hour_counts()`);

  // Counts are read row by row (status and shard), newest hour first, without an aggregate: a
  // plan that groups or sorts would read every hour of the merchant before the first answer.
  await knex.raw(`create function pixflow_charge_page_start(p_merchant text, p_status text, p_offset bigint,
      out before_ts timestamptz, out skip bigint)
    language plpgsql stable as $$
    declare
      counts refcursor;
      r record;
      seen bigint := 0;
      newer bigint := 0;
      current_hour timestamptz;
    begin
      -- Two fixed queries, so that each is planned on its own index.
      if p_status is null then
        open counts for select hour, n from charge_hour_counts where merchant_id = p_merchant order by hour desc;
      else
        open counts for select hour, n from charge_hour_counts where merchant_id = p_merchant and status = p_status
          order by hour desc;
      end if;
      loop
        fetch counts into r;
        exit when not found;
        if current_hour is distinct from r.hour then
          current_hour := r.hour;
          newer := seen;
        end if;
        seen := seen + r.n;
        if seen > p_offset then
          close counts;
          before_ts := r.hour + interval '1 hour';
          skip := p_offset - newer;
          return;
        end if;
      end loop;
      close counts;
      before_ts := '-infinity';
      skip := 0;
    end $$`);

  await knex.raw(`insert into charge_hour_counts (merchant_id, status, hour, shard, n)
    select merchant_id, status, date_trunc('hour', created_at, 'UTC'), hashtext(id) & 7, count(*) from charges group by 1, 2, 3, 4`);
  // Statistics at once, so the first lists after the migration already use the indexes above.
  await knex.raw('analyze charge_hour_counts');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function if exists pixflow_charge_page_start(text, text, bigint)');
  await knex.raw('drop trigger if exists charges_hour_count_truncate on charges');
  await knex.raw('drop trigger if exists charges_hour_count_change on charges');
  await knex.raw('drop trigger if exists charges_hour_count_delete on charges');
  await knex.raw('drop trigger if exists charges_hour_count_insert on charges');
  await knex.raw('drop function if exists pixflow_truncate_charge_hour_counts()');
  await knex.raw('drop function if exists pixflow_count_changed_charge_hour()');
  await knex.raw('drop function if exists pixflow_count_deleted_charge_hours()');
  await knex.raw('drop function if exists pixflow_count_inserted_charge_hours()');
  await knex.raw('drop table if exists charge_hour_counts');
}
