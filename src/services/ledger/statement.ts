/**
 * The merchant's statement (docs/api.md "Statement"): its ledger movements of a range of days with
 * the balances after each, by page (GET /v1/merchants/me/statement, `ops statement`) or as CSV of
 * the whole range (GET /v1/merchants/me/statement.csv, `ops statement --csv`). The lines are the
 * ledger's postings (src/stores/statement.ts), so for each balance opening + Σ lines = closing,
 * and with `to` today the closing is the balance GET /v1/merchants/me/balance answers.
 */
import { pipeline, Transform, type Readable } from 'node:stream';
import type { Knex } from 'knex';
import {
  DEFAULT_STATEMENT_DAYS,
  MAX_STATEMENT_DAYS,
  STATEMENT_CSV_COLUMNS,
  STATEMENT_TIME_ZONE,
  type StatementCsvQuery,
  type StatementEntry,
  type StatementQuery,
  type StatementResponse,
} from '../../contracts/statement';
import type { StatementEntryType } from '../../contracts/statuses';
import { assertPageWithinDepth, pageIsRead } from '../../contracts/validation';
import { validationError } from '../../lib/errors';
import { statementStore, type StatementRange, type StatementRow } from '../../stores/statement';

const DAY_MS = 86_400_000;

// en-CA formats as YYYY-MM-DD. Made once: building a DateTimeFormat costs more than formatting.
const STATEMENT_DAY = new Intl.DateTimeFormat('en-CA', { timeZone: STATEMENT_TIME_ZONE });

/** Today's date in the statement's zone, YYYY-MM-DD. */
export function todayInStatementZone(now: Date = new Date()): string {
  return STATEMENT_DAY.format(now);
}

const dayNumber = (day: string): number => Date.parse(`${day}T00:00:00Z`) / DAY_MS;
const dayOf = (n: number): string => new Date(n * DAY_MS).toISOString().slice(0, 10);

/** The range asked for, defaults filled in; 400 when `from` is after `to` or it spans more than 366 days. */
export function statementRange(
  q: { from?: string; to?: string },
  now: Date = new Date(),
): { from: string; to: string } {
  const to = q.to ?? todayInStatementZone(now);
  const from = q.from ?? dayOf(dayNumber(to) - (DEFAULT_STATEMENT_DAYS - 1));
  const days = dayNumber(to) - dayNumber(from) + 1;
  if (days < 1) throw validationError('from must not be after to', 'from');
  if (days > MAX_STATEMENT_DAYS)
    throw validationError(`the range from ${from} to ${to} spans ${days} days: at most ${MAX_STATEMENT_DAYS}`, 'from');
  return { from, to };
}

/** The ledger transaction kinds (src/services/ledger/ledger.ts) as statement lines. */
const TYPE_OF_KIND: Record<string, StatementEntryType> = {
  charge_paid: 'CHARGE_PAID',
  charge_settled: 'SETTLEMENT',
  refund_debit: 'REFUND',
  refund_failed: 'REFUND_RESTORED',
  infraction_refund_failed: 'REFUND_RESTORED',
  withdrawal_debit: 'WITHDRAWAL',
  withdrawal_failed: 'WITHDRAWAL_RESTORED',
  withdrawal_returned: 'WITHDRAWAL_RESTORED',
  infraction_block: 'MED_BLOCK',
  infraction_unblock: 'MED_RELEASE',
  infraction_refund_debit: 'MED_REFUND',
  adjustment: 'ADJUSTMENT',
};

type Ids = Pick<StatementEntry, 'chargeId' | 'withdrawId' | 'refundId' | 'infractionId'>;

/** The ids a line names, from its transaction's reference scheme (src/services/ledger/ledger.ts). */
function idsOf(row: StatementRow): Ids {
  const [scheme, id = null] = row.reference.split(':');
  const ids: Ids = { chargeId: null, withdrawId: null, refundId: null, infractionId: null };
  if (scheme === 'charge') ids.chargeId = row.chargeId ?? id;
  else if (scheme === 'withdrawal') ids.withdrawId = id;
  else if (scheme === 'refund') {
    ids.refundId = id;
    ids.chargeId = row.refundChargeId;
    ids.infractionId = row.refundInfractionId;
  } else if (scheme === 'infraction') {
    ids.infractionId = id;
    ids.chargeId = row.infractionChargeId;
  }
  return ids;
}

function describe(type: StatementEntryType, kind: string, ids: Ids, own: string | null): string {
  switch (type) {
    case 'CHARGE_PAID':
      return `Payment of charge ${ids.chargeId}`;
    case 'FEE':
      return `Fee on charge ${ids.chargeId}`;
    case 'SETTLEMENT':
      return `Settlement of charge ${ids.chargeId}`;
    case 'WITHDRAWAL':
      return `Withdrawal ${ids.withdrawId}`;
    case 'WITHDRAWAL_RESTORED':
      return kind === 'withdrawal_returned'
        ? `Withdrawal ${ids.withdrawId} sent back by the destination bank`
        : `Withdrawal ${ids.withdrawId} failed: amount returned`;
    case 'REFUND':
      return `Refund ${ids.refundId} of charge ${ids.chargeId}`;
    case 'REFUND_RESTORED':
      return ids.infractionId
        ? `MED refund ${ids.refundId} not completed: amount blocked again`
        : `Refund ${ids.refundId} failed: amount returned`;
    case 'MED_BLOCK':
      return `MED block for infraction ${ids.infractionId}`;
    case 'MED_RELEASE':
      return `MED release of infraction ${ids.infractionId}`;
    case 'MED_REFUND':
      return `MED refund ${ids.refundId} to the payer (infraction ${ids.infractionId})`;
    case 'ADJUSTMENT':
      return own ?? `Adjustment (${kind})`;
  }
}

/**
 * A line as the API shows it. `amount`: what it adds to the total balance, or for a move between
 * the merchant's own balances (settlement, MED block and release) what it adds to `available`.
 */
export function entryOf(row: StatementRow): StatementEntry {
  const type: StatementEntryType = row.part === 2 ? 'FEE' : (TYPE_OF_KIND[row.kind] ?? 'ADJUSTMENT');
  const ids = idsOf(row);
  const total = row.dAvailable + row.dPending + row.dBlocked;
  return {
    id: row.part === 2 ? `${row.transactionId}:fee` : row.transactionId,
    occurredAt: row.occurredAt,
    type,
    description: describe(type, row.kind, ids, row.description),
    amount: total !== 0 ? total : row.dAvailable,
    balanceAfter: { available: row.available, pending: row.pending, blocked: row.blocked },
    ...ids,
  };
}

/** Cents as reais with two decimals: -150 → "-1.50". */
export function reais(cents: number): string {
  const abs = Math.abs(cents);
  return `${cents < 0 ? '-' : ''}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/**
 * An RFC 4180 field: quoted (its quotes doubled) when it holds a comma, a quote or a line break.
 * Only a description can; ids, types, times and amounts never do.
 */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** One CSV record (STATEMENT_CSV_COLUMNS' order), CRLF-terminated; one template, no array per line. */
function csvRecord(e: StatementEntry): string {
  const b = e.balanceAfter;
  return (
    `${e.id},${e.occurredAt},${e.type},${csvField(e.description)},${reais(e.amount)},${e.amount},` +
    `${reais(b.available)},${b.available},${reais(b.pending)},${b.pending},${reais(b.blocked)},${b.blocked},` +
    `${e.chargeId ?? ''},${e.withdrawId ?? ''},${e.refundId ?? ''},${e.infractionId ?? ''}\r\n`
  );
}

/** Records are handed on in chunks of about this many characters, not one by one. */
const CSV_CHUNK = 64 * 1024;

export function createStatementService(deps: { knex: Knex }) {
  const store = statementStore(deps.knex);

  /** One page of the range, with its total, opening and closing (400 past the list depth bound). */
  async function page(merchantId: string, q: StatementQuery, now = new Date()): Promise<StatementResponse> {
    const { from, to } = statementRange(q, now);
    const range: StatementRange = { merchantId, from, to };
    const offset = (q.page - 1) * q.limit;
    const { summary, rows } = await store.page(range, { offset, limit: q.limit });
    assertPageWithinDepth(q.page, q.limit, summary.total);
    const entries = pageIsRead(offset, q.limit, summary.total) ? rows.map(entryOf) : [];
    const { total, opening, closing } = summary;
    return { page: q.page, limit: q.limit, total, from, to, opening, closing, entries };
  }

  /**
   * The whole range as RFC 4180 CSV (a header row, CRLF line ends, `csvField` quoting), streamed
   * from a database cursor with backpressure: the cursor reads its next batch only when the
   * response has taken the previous ones, so memory holds a batch, not the range.
   */
  function csv(merchantId: string, q: StatementCsvQuery, now = new Date()): { filename: string; body: Readable } {
    const { from, to } = statementRange(q, now);
    const rows = store.stream({ merchantId, from, to });
    let pending = `${STATEMENT_CSV_COLUMNS.join(',')}\r\n`;
    const toCsv = new Transform({
      writableObjectMode: true,
      transform(row: Record<string, unknown>, _enc, done) {
        pending += csvRecord(entryOf(store.rowOf(row)));
        if (pending.length < CSV_CHUNK) return done();
        const chunk = pending;
        pending = '';
        done(null, chunk);
      },
      flush(done) {
        done(null, pending);
      },
    });
    pipeline(rows, toCsv, () => undefined);
    return { filename: `statement-${from}-${to}.csv`, body: toCsv };
  }

  return { page, csv };
}

export type StatementService = ReturnType<typeof createStatementService>;
