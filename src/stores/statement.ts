/**
 * The merchant's statement (docs/api.md "Statement"), read from `ledger_statement_lines`: one row
 * per movement of the merchant's `available`, `pending` or `blocked` balance (a payment: its gross,
 * CHARGE_PAID, and its fee, FEE), written with its postings by a trigger of the ledger (migration
 * 20261202100100_statement_lines), with what it moved and the balance after it of each one it
 * moved. Lines come in ledger order (`seq`, the transaction's first posting id: postings of an
 * account are numbered in the order its balance changed, under its row lock).
 *
 * The range is the lines from the first one at or after `from`'s midnight (America/Sao_Paulo) to
 * the first one at or after the midnight that ends `to`, by `seq`; its opening is, for each
 * balance, the balance after the last line before it that moved it, and the balances after each
 * line are window sums from the page's own opening found the same way. So a page costs index
 * lookups, a count of the range and a walk of the lines skipped, never a sum over history
 * (docs/performance.md "The statement"). One SQL statement, one snapshot.
 */
import type { Readable } from 'node:stream';
import type { Db } from '../db/types';
import { STATEMENT_TIME_ZONE } from '../contracts/statement';

/** One line as SQL gives it: the ledger transaction, its part, what it moved and the balances after. */
export interface StatementRow {
  transactionId: string;
  /** 1: the movement; 2: a payment's fee line. */
  part: number;
  kind: string;
  reference: string;
  description: string | null;
  /** ISO 8601 in UTC with milliseconds, as the API shows times: formatted by PostgreSQL (see RUNNING). */
  occurredAt: string;
  dAvailable: number;
  dPending: number;
  dBlocked: number;
  available: number;
  pending: number;
  blocked: number;
  chargeId: string | null;
  refundChargeId: string | null;
  infractionChargeId: string | null;
  refundInfractionId: string | null;
}

export interface StatementSummary {
  total: number;
  opening: { available: number; pending: number; blocked: number };
  closing: { available: number; pending: number; blocked: number };
}

/** `from`, `to` (inclusive) as calendar days; the store turns them into instants of the zone. */
export interface StatementRange {
  merchantId: string;
  from: string;
  to: string;
}

const MAX_SEQ = '9223372036854775807';

// The range as `seq` bounds: [lo, hi).
const BOUNDS = `
  bounds as (
    select (cast(:from as date) + time '00:00') at time zone '${STATEMENT_TIME_ZONE}' as t_from,
           (cast(:to as date) + 1 + time '00:00') at time zone '${STATEMENT_TIME_ZONE}' as t_to
  ),
  lo as (
    select coalesce((select l.seq from ledger_statement_lines l
      where l.merchant_id = :merchant and l.created_at >= (select t_from from bounds)
      order by l.created_at, l.seq limit 1), ${MAX_SEQ}) as seq
  ),
  hi as (
    select greatest((select seq from lo), coalesce((select l.seq from ledger_statement_lines l
      where l.merchant_id = :merchant and l.created_at >= (select t_to from bounds)
      order by l.created_at, l.seq limit 1), ${MAX_SEQ})) as seq
  )`;

/** The balances after the last line before (`seq`, `part`) that moved each (0 when none did). */
const BALANCES_BEFORE = (seq: string, part: string): string =>
  ['available', 'pending', 'blocked']
    .map(
      (k) => `coalesce((select b.${k} from ledger_statement_lines b
        where b.merchant_id = :merchant and b.${k} is not null and (b.seq, b.part) < (${seq}, ${part})
        order by b.seq desc, b.part desc limit 1), 0) as ${k}`,
    )
    .join(', ');

const IN_RANGE = `l.merchant_id = :merchant and l.seq >= (select seq from lo) and l.seq < (select seq from hi)`;

// The time as the API writes it (Date#toISOString's form), made by PostgreSQL: a CSV of a million
// lines then parses and formats no timestamp in Node (docs/performance.md "The statement").
const ISO_UTC = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"';

const RUNNING = `
  select l.seq, l.part, l.transaction_id as "transactionId", l.kind, l.reference, l.description,
    to_char(l.created_at at time zone 'UTC', '${ISO_UTC}') as "occurredAt",
    l.d_available as "dAvailable", l.d_pending as "dPending", l.d_blocked as "dBlocked",
    o.available + sum(l.d_available) over w as available,
    o.pending + sum(l.d_pending) over w as pending,
    o.blocked + sum(l.d_blocked) over w as blocked`;

// The ids a line names beyond its reference (a refund's charge and infraction, an infraction's
// charge): looked up for those lines only, one index probe each, keeping the lines' order.
const NAMED_IDS = `
  select r.*,
    case when r.reference like 'charge:%' then split_part(r.reference, ':', 2) end as "chargeId",
    case when r.reference like 'refund:%' then
      (select cr.charge_id from charge_refunds cr where cr.id = split_part(r.reference, ':', 2)) end as "refundChargeId",
    case when r.reference like 'infraction:%' then
      (select i.charge_id from infractions i where i.id = split_part(r.reference, ':', 2)) end as "infractionChargeId",
    case when r.reference like 'refund:%' then
      (select i.id from infractions i where i.refund_id = split_part(r.reference, ':', 2)) end as "refundInfractionId"
  from r`;

const SUMMARY = `
  select cast((select count(*) from ledger_statement_lines l where ${IN_RANGE}) as int) as total,
    o.available as o_available, o.pending as o_pending, o.blocked as o_blocked,
    c.available as c_available, c.pending as c_pending, c.blocked as c_blocked
  from (select ${BALANCES_BEFORE('(select seq from lo)', '0')}) o,
       (select ${BALANCES_BEFORE('(select seq from hi)', '0')}) c`;

/** The statement's text: the range's bounds, then `body`. */
function sql(body: string): string {
  return `with ${BOUNDS.trim()}, ${body}`;
}

const bindings = (range: StatementRange) => ({ merchant: range.merchantId, from: range.from, to: range.to });

type NumericRow = Record<string, number | string | null>;

function summaryOf(row: NumericRow | undefined): StatementSummary {
  const n = (k: string): number => Number(row?.[k] ?? 0);
  return {
    total: n('total'),
    opening: { available: n('o_available'), pending: n('o_pending'), blocked: n('o_blocked') },
    closing: { available: n('c_available'), pending: n('c_pending'), blocked: n('c_blocked') },
  };
}

// Module-level helpers, not closures made per row: a million-line CSV calls them 8 million times.
const num = (r: Record<string, unknown>, k: string): number => Number(r[k]);
const str = (r: Record<string, unknown>, k: string): string | null =>
  r[k] === null || r[k] === undefined ? null : String(r[k]);

function rowOf(r: Record<string, unknown>): StatementRow {
  return {
    transactionId: String(r.transactionId),
    part: num(r, 'part'),
    kind: String(r.kind),
    reference: String(r.reference),
    description: str(r, 'description'),
    occurredAt: String(r.occurredAt),
    dAvailable: num(r, 'dAvailable'),
    dPending: num(r, 'dPending'),
    dBlocked: num(r, 'dBlocked'),
    available: num(r, 'available'),
    pending: num(r, 'pending'),
    blocked: num(r, 'blocked'),
    chargeId: str(r, 'chargeId'),
    refundChargeId: str(r, 'refundChargeId'),
    infractionChargeId: str(r, 'infractionChargeId'),
    refundInfractionId: str(r, 'refundInfractionId'),
  };
}

export function statementStore(db: Db) {
  return {
    /**
     * One page of the range (`offset`, `limit` lines) with the range's total, opening and closing,
     * in one statement: the summary row, joined to the page's lines (none past the end). The
     * lines skipped are walked in the primary key's index alone (an index-only scan), and only the
     * page's own rows are read from the table.
     */
    async page(
      range: StatementRange,
      page: { offset: number; limit: number },
    ): Promise<{ summary: StatementSummary; rows: StatementRow[] }> {
      const text = sql(`summary as (${SUMMARY}),
        keys as (
          select l.seq, l.part from ledger_statement_lines l where ${IN_RANGE}
          order by l.seq, l.part offset :offset limit :limit
        ),
        lines as (
          select l.* from keys k join ledger_statement_lines l
            on l.merchant_id = :merchant and l.seq = k.seq and l.part = k.part
        ),
        first as (select seq, part from keys order by seq, part limit 1),
        o as (select ${BALANCES_BEFORE('(select seq from first)', '(select part from first)')}),
        r as (
          ${RUNNING}
          from lines l cross join o
          window w as (order by l.seq, l.part rows between unbounded preceding and current row)
        ),
        page as (${NAMED_IDS})
        select s.*, to_jsonb(p) as line from summary s left join page p on true
        order by p.seq, p.part`);
      const result = (await db.raw(text, { ...bindings(range), offset: page.offset, limit: page.limit })) as {
        rows: Array<NumericRow & { line: Record<string, unknown> | null }>;
      };
      return {
        summary: summaryOf(result.rows[0]),
        rows: result.rows.filter((r) => r.line !== null).map((r) => rowOf(r.line as Record<string, unknown>)),
      };
    },

    /**
     * Every line of the range, oldest first, as an object stream read through a server-side
     * cursor (knex `.stream()`, pg-query-stream): rows arrive `batchSize` at a time as the
     * consumer reads, so memory stays flat whatever the range holds. One statement, one snapshot.
     */
    stream(range: StatementRange, batchSize = 1000): Readable & AsyncIterable<Record<string, unknown>> {
      const text = sql(`o as (select ${BALANCES_BEFORE('(select seq from lo)', '0')}),
        r as (
          ${RUNNING}
          from ledger_statement_lines l cross join o
          where ${IN_RANGE}
          window w as (order by l.seq, l.part rows between unbounded preceding and current row)
        )
        ${NAMED_IDS}
        order by r.seq, r.part`);
      return db.raw(text, bindings(range)).stream({ batchSize, highWaterMark: batchSize }) as unknown as Readable &
        AsyncIterable<Record<string, unknown>>;
    },

    /** A streamed row as a StatementRow. */
    rowOf,
  };
}

export type StatementStore = ReturnType<typeof statementStore>;
