/**
 * The merchant's statement as it is posted (docs/api.md "Statement", docs/performance.md "The
 * statement"): `ledger_statement_lines` holds one row per movement of a merchant's `available`,
 * `pending` or `blocked` balance (two for a payment: its gross and its fee), with what it moved on
 * each and the balance after it of each one it moved (null for the others), and its transaction's
 * kind, reference and description (so a CSV of a million lines joins nothing). A page of the
 * statement is then an index seek, and its opening a lookup of the last line before it that moved
 * each balance, whatever the range holds.
 *
 * Written by a statement trigger on `ledger_postings` from the transition table: the balance after
 * a posting is the account's `balance` less the later postings of the same statement on that
 * account. `ledger_post_batch` locks every account it posts to and writes their balances before
 * it inserts the postings (src/services/ledger/ledger.ts `postBatch`), so that `balance` is the
 * account's as of these postings, in the order of its posting ids; a line's `seq` is its
 * transaction's first posting id (two transactions that touch one account never interleave).
 * A payment whose fee took it all moves no balance of the merchant's and has no line.
 *
 * Like the ledger's tables, the app's role may only read it (docs/production.md "Database
 * roles"): the trigger runs as the ledger's owner, inside `ledger_post_batch`. Existing postings
 * are turned into lines by the same rule, their balances as running sums from zero.
 */
import type { Knex } from 'knex';

const APP_ROLE = 'pixflow_app';

/**
 * The INSERT of the lines of the postings in `source` (a subquery of id, transaction_id,
 * account_id, amount and `after`, the account's balance after the posting). Also used by
 * bench/statement.ts after its set-based seed.
 */
export const LINES = (source: string): string => `
  with p as (
    select s.id, s.transaction_id, s.amount, s.after, a.kind
    from ${source} s join ledger_accounts a on a.id = s.account_id
    where a.kind in ('available', 'pending', 'blocked', 'fee_revenue')
  ),
  tx as (
    select p.transaction_id, min(p.id) filter (where p.kind <> 'fee_revenue') as seq,
      coalesce(sum(p.amount) filter (where p.kind = 'available'), 0) as d_available,
      coalesce(sum(p.amount) filter (where p.kind = 'pending'), 0) as d_pending,
      coalesce(sum(p.amount) filter (where p.kind = 'blocked'), 0) as d_blocked,
      (array_agg(p.after order by p.id desc) filter (where p.kind = 'available'))[1] as available,
      (array_agg(p.after order by p.id desc) filter (where p.kind = 'pending'))[1] as pending,
      (array_agg(p.after order by p.id desc) filter (where p.kind = 'blocked'))[1] as blocked,
      coalesce(sum(p.amount) filter (where p.kind = 'fee_revenue'), 0) as fee_revenue
    from p group by p.transaction_id
  )
  insert into ledger_statement_lines
    (merchant_id, seq, part, transaction_id, created_at, kind, reference, description,
     d_available, d_pending, d_blocked, available, pending, blocked)
  select t.merchant_id, tx.seq, part.n, t.id, t.created_at, t.kind, t.reference, t.description,
    case when part.n = 1 then tx.d_available else 0 end,
    case when part.n = 1 then tx.d_pending + f.fee else -f.fee end,
    case when part.n = 1 then tx.d_blocked else 0 end,
    case when part.n = 1 then tx.available end,
    case when part.n = 1 then tx.pending + f.fee else tx.pending end,
    case when part.n = 1 then tx.blocked end
  from tx
  join ledger_transactions t on t.id = tx.transaction_id
  cross join lateral (select case when t.kind = 'charge_paid' then tx.fee_revenue else 0 end as fee) f
  cross join (values (1), (2)) part(n)
  where tx.seq is not null and (part.n = 1 or (f.fee > 0 and tx.pending is not null))
  order by tx.seq, part.n`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create table ledger_statement_lines (
    merchant_id text not null,
    seq bigint not null,
    part smallint not null,
    transaction_id text not null,
    created_at timestamptz not null,
    kind text not null,
    reference text not null,
    description text,
    d_available bigint not null,
    d_pending bigint not null,
    d_blocked bigint not null,
    available bigint,
    pending bigint,
    blocked bigint,
    primary key (merchant_id, seq, part)
  )`);
  await knex.raw('create index ledger_statement_lines_time_idx on ledger_statement_lines (merchant_id, created_at)');
  for (const kind of ['available', 'pending', 'blocked']) {
    await knex.raw(`create index ledger_statement_lines_${kind}_idx on ledger_statement_lines (merchant_id, seq, part)
      where ${kind} is not null`);
  }

  await knex.raw(`create function ledger_statement_lines_append() returns trigger language plpgsql as $$
    begin
      ${LINES(`(select np.id, np.transaction_id, np.account_id, np.amount,
          a.balance - coalesce(sum(np.amount) over (partition by np.account_id order by np.id desc
            rows between unbounded preceding and 1 preceding), 0) as after
        from new_postings np join ledger_accounts a on a.id = np.account_id)`)};
      return null;
    end $$`);
  await knex.raw(`create trigger ledger_postings_statement_lines after insert on ledger_postings
    referencing new table as new_postings for each statement execute function ledger_statement_lines_append()`);

  // The postings so far, their balances as running sums from zero.
  await knex.raw(
    LINES(`(select id, transaction_id, account_id, amount,
      sum(amount) over (partition by account_id order by id rows between unbounded preceding and current row) as after
    from ledger_postings)`),
  );

  await knex.raw(`do $$ begin
    if exists (select 1 from pg_roles where rolname = '${APP_ROLE}') then
      revoke insert, update, delete, truncate on ledger_statement_lines from ${APP_ROLE};
      grant select on ledger_statement_lines to ${APP_ROLE};
    end if;
  end $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists ledger_postings_statement_lines on ledger_postings');
  await knex.raw('drop function if exists ledger_statement_lines_append()');
  await knex.raw('drop table if exists ledger_statement_lines');
}
