/**
 * The ledger's remaining promises, held by PostgreSQL instead of only checked after the fact
 * (README "Money and the ledger", "Checking the books"). At commit at the latest, the database
 * refuses:
 *
 * - a balance that disagrees with its postings. Summing an account's postings at every commit
 *   would cost O(postings of the account), and the hot ones (`fee_revenue`, `acquirer`) have
 *   millions. Instead `ledger_accounts.posted` is the running sum of the account's postings,
 *   added to by a statement trigger on every insert into `ledger_postings` (postings are
 *   append-only, so inserts are the only way that sum changes). A DEFERRABLE INITIALLY DEFERRED
 *   constraint trigger on `ledger_accounts` then compares `balance` with `posted`: O(1) per
 *   account touched. Its WHEN clause is evaluated when the row is written, not at commit, so an
 *   account is queued for the check only while a write leaves it inconsistent (the ledger's
 *   balance UPDATE, before its postings are inserted); the check re-reads the row at commit,
 *   since by then the postings have caught up. `posted` itself is written only by the posting
 *   trigger: a BEFORE trigger refuses any change of it made outside a trigger
 *   (pg_trigger_depth() = 1 is a statement of a client) and any new account that claims postings
 *   it cannot have yet. Only a role that can disable triggers (the tables' owner) gets around
 *   that, and such a role could drop the rules anyway; `checkLedgerInvariant` still recomputes the
 *   sums for that case. Truncating `ledger_postings` (no row triggers) is refused like UPDATE and
 *   DELETE already are. The price: each account a transaction touches gets a second row version
 *   (balance, then posted) and one deferred check, about +0.3–0.4 ms of PostgreSQL CPU per posting
 *   transaction (README "Money and the ledger").
 * - a posting to an account of another merchant than its transaction's: checked by the same
 *   statement trigger, one join over the inserted rows; an account's and a transaction's merchant
 *   cannot change afterwards.
 * - a transaction without postings: a deferred constraint trigger on `ledger_transactions`
 *   looks for one posting at commit (one index probe). The ledger inserts the transaction row
 *   before its postings, in one database transaction; a replay inserts nothing and queues nothing.
 *   With zero-sum and non-zero amounts (already enforced), "has postings" means "at least two".
 *
 * Existing rows are validated (as ADD CONSTRAINT validates a CHECK): the migration refuses to
 * apply over books that already break a rule, naming what is wrong.
 */
import type { Knex } from 'knex';

/** Raised by every rule here; SQLSTATE check_violation, like the zero-sum trigger's. */
const CHECK_VIOLATION = "using errcode = '23514'";

export async function up(knex: Knex): Promise<void> {
  // Existing books must already satisfy the rules.
  const broken = (await knex.raw(`
    select
      (select count(*) from ledger_accounts a
         where a.balance <> coalesce((select sum(p.amount) from ledger_postings p where p.account_id = a.id), 0)) as balances,
      (select count(*) from ledger_postings p
         join ledger_accounts a on a.id = p.account_id
         join ledger_transactions t on t.id = p.transaction_id
         where a.merchant_id <> t.merchant_id) as foreign_postings,
      (select count(*) from ledger_transactions t
         where not exists (select 1 from ledger_postings p where p.transaction_id = t.id)) as empty_transactions`)) as {
    rows: Array<{ balances: string; foreign_postings: string; empty_transactions: string }>;
  };
  const b = broken.rows[0];
  if (b && (Number(b.balances) > 0 || Number(b.foreign_postings) > 0 || Number(b.empty_transactions) > 0)) {
    throw new Error(
      `the ledger already breaks the rules this migration enforces: ${b.balances} account balance(s) differ from their postings, ` +
        `${b.foreign_postings} posting(s) to another merchant's account, ${b.empty_transactions} transaction(s) without postings; ` +
        'repair them first (npm run ops -- ledger check)',
    );
  }

  await knex.raw('alter table ledger_accounts add column posted bigint not null default 0');
  await knex.raw(`update ledger_accounts a set posted = s.amount
    from (select account_id, sum(amount) as amount from ledger_postings group by account_id) s
    where a.id = s.account_id`);

  // Postings: one statement trigger per insert; the rows are already locked by the ledger's
  // balance UPDATEs (in its lock order), so the update below waits on nothing new.
  await knex.raw(`create function ledger_postings_apply() returns trigger language plpgsql as $$
    declare bad record;
    begin
      select p.transaction_id, p.account_id, a.merchant_id as account_merchant, t.merchant_id as transaction_merchant
        into bad
        from new_postings p
        join ledger_accounts a on a.id = p.account_id
        join ledger_transactions t on t.id = p.transaction_id
        where a.merchant_id <> t.merchant_id
        limit 1;
      if found then
        raise exception 'ledger posting to another merchant''s account: transaction % belongs to merchant %, account % to merchant %',
          bad.transaction_id, bad.transaction_merchant, bad.account_id, bad.account_merchant ${CHECK_VIOLATION};
      end if;
      update ledger_accounts a set posted = a.posted + s.amount
        from (select account_id, sum(amount) as amount from new_postings group by account_id) s
        where a.id = s.account_id;
      return null;
    end $$`);
  await knex.raw(`create trigger ledger_postings_apply after insert on ledger_postings
    referencing new table as new_postings for each statement execute function ledger_postings_apply()`);
  await knex.raw(`create function ledger_postings_no_truncate() returns trigger language plpgsql as $$
    begin raise exception 'ledger postings are append-only (truncate refused)'; end $$`);
  await knex.raw(`create trigger ledger_postings_no_truncate before truncate on ledger_postings
    for each statement execute function ledger_postings_no_truncate()`);

  // Accounts: `posted` moves only with postings; owner and kind are fixed.
  await knex.raw(`create function ledger_accounts_guard() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        raise exception 'ledger account % cannot start with posted = %: posted is the sum of its postings, and it has none yet',
          new.id, new.posted ${CHECK_VIOLATION};
      end if;
      if new.merchant_id is distinct from old.merchant_id or new.kind is distinct from old.kind then
        raise exception 'ledger account % cannot change its merchant or kind', old.id ${CHECK_VIOLATION};
      end if;
      if new.posted is distinct from old.posted and pg_trigger_depth() < 2 then
        raise exception 'ledger account % posted is the running sum of its postings, written only by the posting trigger', old.id
          ${CHECK_VIOLATION};
      end if;
      return new;
    end $$`);
  await knex.raw(`create trigger ledger_accounts_guard_insert before insert on ledger_accounts
    for each row when (new.posted <> 0) execute function ledger_accounts_guard()`);
  await knex.raw(`create trigger ledger_accounts_guard_update before update on ledger_accounts
    for each row when (new.posted is distinct from old.posted or new.merchant_id is distinct from old.merchant_id
                       or new.kind is distinct from old.kind)
    execute function ledger_accounts_guard()`);
  await knex.raw(`create function ledger_check_account_balance() returns trigger language plpgsql as $$
    declare cur record;
    begin
      -- The row as it is now: the event may be older than the postings that caught up with it.
      select id, merchant_id, kind, balance, posted into cur from ledger_accounts where id = new.id;
      if found and cur.balance <> cur.posted then
        raise exception 'ledger account % (% of merchant %) has balance % but its postings sum to %: a balance changes only with its postings',
          cur.id, cur.kind, cur.merchant_id, cur.balance, cur.posted ${CHECK_VIOLATION};
      end if;
      return null;
    end $$`);
  await knex.raw(`create constraint trigger ledger_accounts_balance_posted after insert or update on ledger_accounts
    deferrable initially deferred for each row when (new.balance <> new.posted)
    execute function ledger_check_account_balance()`);

  // Transactions: at least one posting by commit; the merchant is fixed.
  await knex.raw(`create function ledger_check_transaction_postings() returns trigger language plpgsql as $$
    begin
      if not exists (select 1 from ledger_postings where transaction_id = new.id)
         and exists (select 1 from ledger_transactions where id = new.id) then
        raise exception 'ledger transaction % (%) has no postings: every transaction moves money', new.id, new.reference
          ${CHECK_VIOLATION};
      end if;
      return null;
    end $$`);
  await knex.raw(`create constraint trigger ledger_transactions_has_postings after insert on ledger_transactions
    deferrable initially deferred for each row execute function ledger_check_transaction_postings()`);
  await knex.raw(`create function ledger_transactions_fixed_merchant() returns trigger language plpgsql as $$
    begin
      raise exception 'ledger transaction % cannot change its merchant', old.id ${CHECK_VIOLATION};
    end $$`);
  await knex.raw(`create trigger ledger_transactions_fixed_merchant before update on ledger_transactions
    for each row when (new.merchant_id is distinct from old.merchant_id)
    execute function ledger_transactions_fixed_merchant()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists ledger_transactions_fixed_merchant on ledger_transactions');
  await knex.raw('drop trigger if exists ledger_transactions_has_postings on ledger_transactions');
  await knex.raw('drop trigger if exists ledger_accounts_balance_posted on ledger_accounts');
  await knex.raw('drop trigger if exists ledger_accounts_guard_update on ledger_accounts');
  await knex.raw('drop trigger if exists ledger_accounts_guard_insert on ledger_accounts');
  await knex.raw('drop trigger if exists ledger_postings_no_truncate on ledger_postings');
  await knex.raw('drop trigger if exists ledger_postings_apply on ledger_postings');
  await knex.raw('drop function if exists ledger_transactions_fixed_merchant()');
  await knex.raw('drop function if exists ledger_check_transaction_postings()');
  await knex.raw('drop function if exists ledger_check_account_balance()');
  await knex.raw('drop function if exists ledger_accounts_guard()');
  await knex.raw('drop function if exists ledger_postings_no_truncate()');
  await knex.raw('drop function if exists ledger_postings_apply()');
  await knex.raw('alter table ledger_accounts drop column if exists posted');
}
