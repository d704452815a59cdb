/**
 * Least privilege (docs/production.md "Database roles"): the service's role `pixflow_app` (a login
 * role, or a group role its login role is a member of) owns nothing and may only read and write the
 * business tables. The ledger's tables it may only read: it posts through `ledger_post_batch` and
 * locks balances through `ledger_lock_balances`, `SECURITY DEFINER` functions owned by the role
 * that runs this migration, with a fixed `search_path`. So the app's role can neither move a balance
 * without its postings nor rewrite a transaction, and without TEMP on the database nor TRIGGER on
 * any table, it cannot shadow a table or run code of its own inside our triggers.
 *
 * Also, for every role, the owner's included:
 * - a ledger transaction is never updated (its reference, kind and metadata drive settlement);
 * - `posted` changes only inside the posting trigger of a role that owns the table: the former
 *   check (`pg_trigger_depth() < 2`) let any role with UPDATE move `balance` and `posted` together
 *   from a trigger of its own.
 *
 * Roles are created by whoever provisions the database (the embedded PostgreSQL, tools/compose/
 * init-roles.sh, or a DBA); this migration creates `pixflow_app` as a NOLOGIN role only when it is
 * missing and the migrating role may create roles. It imports nothing from src/: its SQL is its own.
 */
import type { Knex } from 'knex';

const APP_ROLE = 'pixflow_app';
const LEDGER_TABLES = ['ledger_accounts', 'ledger_transactions', 'ledger_postings'];
const MIGRATION_TABLES = ['knex_migrations', 'knex_migrations_lock'];
const CHECK_VIOLATION = "using errcode = '23514'";

/** Posts one merchant's movements in arrival order; see src/services/ledger/ledger.ts `postBatch`. */
const POST_BATCH = (schema: string): string => `
create function ledger_post_batch(p_merchant_id text, p_movements jsonb, p_account_ids jsonb) returns jsonb
language plpgsql security definer set search_path = ${schema}, pg_catalog, pg_temp as $$
declare
  v_inserted text[];
  v_earlier jsonb;
  v_kinds text[];
  v_missing text[];
  v_balances jsonb := '{}';
  v_before jsonb;
  v_accounts jsonb := '{}';
  v_postings jsonb := '[]';
  v_outcomes jsonb := '[]';
  v_refused text[] := '{}';
  v_short record;
  m jsonb;
  p record;
begin
  -- 1. The idempotency gate, in reference order (two batches never wait on each other crosswise):
  --    a concurrent duplicate waits here for the first to commit, then finds the conflict.
  with ins as (
    insert into ledger_transactions (id, reference, kind, merchant_id, description, metadata)
    select x->>'id', x->>'reference', x->>'kind', p_merchant_id, x->>'description', nullif(x->'metadata', 'null')
      from jsonb_array_elements(p_movements) x
      order by x->>'reference' collate "C"
    on conflict (reference) do nothing
    returning reference)
  select coalesce(array_agg(reference), '{}') into v_inserted from ins;
  select coalesce(jsonb_object_agg(t.reference, jsonb_build_object('id', t.id, 'kind', t.kind)), '{}')
    into v_earlier
    from ledger_transactions t
    where t.reference in (select x->>'reference' from jsonb_array_elements(p_movements) x)
      and t.reference <> all (v_inserted);

  -- 2. The accounts the new movements touch, created when missing, locked in kind order.
  select coalesce(array_agg(distinct q->>'kind' order by q->>'kind'), '{}') into v_kinds
    from jsonb_array_elements(p_movements) x, jsonb_array_elements(x->'postings') q
    where x->>'reference' = any (v_inserted);
  if cardinality(v_kinds) > 0 then
    select array_agg(k) into v_missing from unnest(v_kinds) k
      where not exists (select 1 from ledger_accounts a where a.merchant_id = p_merchant_id and a.kind = k);
    if v_missing is not null then
      insert into ledger_accounts (id, merchant_id, kind, balance)
        select p_account_ids->>k, p_merchant_id, k, 0 from unnest(v_missing) k order by k
        on conflict (merchant_id, kind) do nothing;
    end if;
    for p in select a.id, a.kind, a.balance from ledger_accounts a
               where a.merchant_id = p_merchant_id and a.kind = any (v_kinds)
               order by a.kind for update loop
      v_accounts := v_accounts || jsonb_build_object(p.kind, p.id);
      v_balances := v_balances || jsonb_build_object(p.kind, p.balance);
    end loop;
  end if;
  v_before := v_balances;

  -- 3. Each movement in arrival order against the running balances.
  for m in select x from jsonb_array_elements(p_movements) x loop
    if not (m->>'reference' = any (v_inserted)) then
      v_outcomes := v_outcomes || jsonb_build_array(jsonb_build_object('status', 'replayed',
        'transactionId', v_earlier->(m->>'reference')->>'id', 'kind', v_earlier->(m->>'reference')->>'kind',
        'balances', v_balances));
      continue;
    end if;
    select q->>'kind' as kind, (q->>'amount')::bigint as amount into v_short
      from jsonb_array_elements(m->'postings') q
      where (q->>'amount')::bigint < 0 and q->>'kind' not in ('acquirer', 'adjustments')
        and coalesce((v_balances->>(q->>'kind'))::bigint, 0) + (q->>'amount')::bigint < 0
      order by q->>'kind' collate "C" limit 1;
    if found then
      v_refused := v_refused || (m->>'id');
      v_outcomes := v_outcomes || jsonb_build_array(jsonb_build_object('status', 'refused',
        'account', v_short.kind, 'requested', -v_short.amount));
      continue;
    end if;
    for p in select q->>'kind' as kind, (q->>'amount')::bigint as amount
               from jsonb_array_elements(m->'postings') q order by q->>'kind' collate "C" loop
      v_balances := v_balances || jsonb_build_object(p.kind, coalesce((v_balances->>p.kind)::bigint, 0) + p.amount);
      v_postings := v_postings || jsonb_build_array(jsonb_build_object(
        'transaction_id', m->>'id', 'account_id', v_accounts->>p.kind, 'amount', p.amount));
    end loop;
    v_outcomes := v_outcomes || jsonb_build_array(jsonb_build_object('status', 'posted',
      'transactionId', m->>'id', 'kind', m->>'kind', 'balances', v_balances));
  end loop;

  -- 4. The writes: refused rows taken back, one UPDATE for every balance, one INSERT of postings.
  if cardinality(v_refused) > 0 then
    delete from ledger_transactions where id = any (v_refused);
  end if;
  update ledger_accounts a
    set balance = a.balance + ((v_balances->>a.kind)::bigint - (v_before->>a.kind)::bigint), updated_at = now()
    where a.merchant_id = p_merchant_id and a.kind = any (v_kinds)
      and (v_balances->>a.kind)::bigint <> (v_before->>a.kind)::bigint;
  insert into ledger_postings (transaction_id, account_id, amount)
    select q->>'transaction_id', q->>'account_id', (q->>'amount')::bigint
      from jsonb_array_elements(v_postings) with ordinality as e(q, n) order by n;
  return v_outcomes;
end $$`;

/** The merchant's balances of `p_kinds`, their rows locked FOR UPDATE in kind order. */
const LOCK_BALANCES = (schema: string): string => `
create function ledger_lock_balances(p_merchant_id text, p_kinds text[]) returns table (kind text, balance bigint)
language sql security definer set search_path = ${schema}, pg_catalog, pg_temp as $$
  select a.kind, a.balance from ledger_accounts a
    where a.merchant_id = p_merchant_id and a.kind = any (p_kinds)
    order by a.kind for update
$$`;

/** `posted` is written by the posting trigger of a role that owns the ledger, and by nothing else. */
const ACCOUNTS_GUARD = (postedRule: string): string => `
create or replace function ledger_accounts_guard() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        raise exception 'ledger account % cannot start with posted = %: posted is the sum of its postings, and it has none yet',
          new.id, new.posted ${CHECK_VIOLATION};
      end if;
      if new.merchant_id is distinct from old.merchant_id or new.kind is distinct from old.kind then
        raise exception 'ledger account % cannot change its merchant or kind', old.id ${CHECK_VIOLATION};
      end if;
      if new.posted is distinct from old.posted and (${postedRule}) then
        raise exception 'ledger account % posted is the running sum of its postings, written only by the posting trigger', old.id
          ${CHECK_VIOLATION};
      end if;
      return new;
    end $$`;
const OWNER_POSTING_TRIGGER =
  "pg_trigger_depth() < 2 or not pg_has_role(current_user, (select relowner from pg_class where oid = tg_relid), 'MEMBER')";

async function ensureAppRole(knex: Knex): Promise<void> {
  await knex.raw(`do $$ begin
    if not exists (select 1 from pg_roles where rolname = '${APP_ROLE}') then
      begin
        create role ${APP_ROLE} nologin;
      exception when insufficient_privilege then
        raise exception 'role ${APP_ROLE} does not exist and % may not create it: create it first (docs/production.md "Database roles")',
          current_user;
      end;
    end if;
  end $$`);
}

export async function up(knex: Knex): Promise<void> {
  await ensureAppRole(knex);
  const schema = ((await knex.raw('select quote_ident(current_schema()) as s')) as { rows: Array<{ s: string }> })
    .rows[0]?.s;
  if (!schema) throw new Error('least privilege: no current schema');

  // The posting functions, callable by the app's role only.
  await knex.raw(POST_BATCH(schema));
  await knex.raw(LOCK_BALANCES(schema));
  for (const fn of ['ledger_post_batch(text, jsonb, jsonb)', 'ledger_lock_balances(text, text[])']) {
    await knex.raw(`revoke all on function ${fn} from public`);
    await knex.raw(`grant execute on function ${fn} to ${APP_ROLE}`);
  }

  // Ledger rules for every role.
  await knex.raw(ACCOUNTS_GUARD(OWNER_POSTING_TRIGGER));
  await knex.raw(`create function ledger_transactions_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'ledger transaction % is history: it is never updated', old.id ${CHECK_VIOLATION};
    end $$`);
  await knex.raw(`create trigger ledger_transactions_append_only before update on ledger_transactions
    for each row execute function ledger_transactions_append_only()`);

  // The app's role: DML on the business tables, reads on the ledger and the migrations' tables.
  await knex.raw(`revoke all on all tables in schema ${schema} from ${APP_ROLE}`);
  await knex.raw(`revoke all on all sequences in schema ${schema} from ${APP_ROLE}`);
  await knex.raw(`grant usage on schema ${schema} to ${APP_ROLE}`);
  await knex.raw(`grant select, insert, update, delete on all tables in schema ${schema} to ${APP_ROLE}`);
  await knex.raw(`grant usage, select on all sequences in schema ${schema} to ${APP_ROLE}`);
  await knex.raw(
    `revoke insert, update, delete on ${[...LEDGER_TABLES, ...MIGRATION_TABLES].join(', ')} from ${APP_ROLE}`,
  );
  await knex.raw(`revoke usage on sequence ledger_postings_id_seq from ${APP_ROLE}`);
  // Tables of later migrations get the same DML (a later ledger-like table revokes its own).
  await knex.raw(
    `alter default privileges in schema ${schema} grant select, insert, update, delete on tables to ${APP_ROLE}`,
  );
  await knex.raw(`alter default privileges in schema ${schema} grant usage, select on sequences to ${APP_ROLE}`);

  // No objects of its own: no CREATE in the schema, no TEMP in the database (when we own it).
  await knex.raw(`revoke create on schema ${schema} from public`);
  await knex.raw(`do $$ begin
    if pg_has_role(current_user, (select datdba from pg_database where datname = current_database()), 'MEMBER') then
      execute format('revoke temporary, create on database %I from public, ${APP_ROLE}', current_database());
    end if;
  end $$`);
}

export async function down(knex: Knex): Promise<void> {
  const schema = ((await knex.raw('select quote_ident(current_schema()) as s')) as { rows: Array<{ s: string }> })
    .rows[0]?.s;
  if (!schema) throw new Error('least privilege: no current schema');
  await knex.raw(`alter default privileges in schema ${schema} revoke all on tables from ${APP_ROLE}`);
  await knex.raw(`alter default privileges in schema ${schema} revoke all on sequences from ${APP_ROLE}`);
  await knex.raw(`revoke all on all tables in schema ${schema} from ${APP_ROLE}`);
  await knex.raw(`revoke all on all sequences in schema ${schema} from ${APP_ROLE}`);
  await knex.raw(`revoke usage on schema ${schema} from ${APP_ROLE}`);
  await knex.raw('drop trigger if exists ledger_transactions_append_only on ledger_transactions');
  await knex.raw('drop function if exists ledger_transactions_append_only()');
  await knex.raw(ACCOUNTS_GUARD('pg_trigger_depth() < 2'));
  await knex.raw('drop function if exists ledger_lock_balances(text, text[])');
  await knex.raw('drop function if exists ledger_post_batch(text, jsonb, jsonb)');
}
