/**
 * The merchant's statement (docs/api.md "Statement"): the query GET /v1/merchants/me/statement and
 * its CSV twin validate with, the `ops statement` options, and the response shape.
 */
import { z } from 'zod';
import { STATEMENT_ENTRY_TYPES } from './statuses';
import { paginationQuery } from './validation';
import { isoTime } from './common';

export { STATEMENT_ENTRY_TYPES };

/** The statement's days are calendar days of this zone: `from` at its midnight, `to` inclusive. */
export const STATEMENT_TIME_ZONE = 'America/Sao_Paulo';

/** The longest range one statement covers, in days (both ends counted). */
export const MAX_STATEMENT_DAYS = 366;

/** Without `from`, the statement covers this many days up to `to` (both ends counted). */
export const DEFAULT_STATEMENT_DAYS = 30;

/** A calendar day, YYYY-MM-DD, that exists (no 2026-02-30). */
export const calendarDay = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { message: 'must be a date YYYY-MM-DD' })
  .refine(
    (v) => {
      const d = new Date(`${v}T00:00:00Z`);
      return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v;
    },
    { message: 'must be a date that exists (YYYY-MM-DD)' },
  );

const range = {
  from: calendarDay.optional().describe(`First day (${STATEMENT_TIME_ZONE}); default: 29 days before \`to\``),
  to: calendarDay.optional().describe(`Last day, inclusive (${STATEMENT_TIME_ZONE}); default: today`),
};

export const statementQuery = paginationQuery.extend(range);
export type StatementQuery = z.infer<typeof statementQuery>;

/** The CSV takes the whole range: no page. */
export const statementCsvQuery = z.object(range);
export type StatementCsvQuery = z.infer<typeof statementCsvQuery>;

export const statementBalances = z.object({ available: z.int(), pending: z.int(), blocked: z.int() });

export const statementEntry = z.object({
  id: z.string().describe('The ledger transaction (a FEE line: its payment’s transaction id + `:fee`)'),
  occurredAt: isoTime,
  type: z.enum(STATEMENT_ENTRY_TYPES),
  description: z.string(),
  amount: z
    .int()
    .describe(
      'Signed cents: what the line adds to the merchant’s total balance; for a move between its own balances (SETTLEMENT, MED_BLOCK, MED_RELEASE) what it adds to `available`',
    ),
  balanceAfter: statementBalances,
  chargeId: z.string().nullable(),
  withdrawId: z.string().nullable(),
  refundId: z.string().nullable(),
  infractionId: z.string().nullable(),
});

export const statementResponse = z.object({
  page: z.int(),
  limit: z.int(),
  total: z.int().describe('Lines in the whole range'),
  from: z.string().describe('First day, YYYY-MM-DD'),
  to: z.string().describe('Last day, YYYY-MM-DD (inclusive)'),
  opening: statementBalances.describe('Balances at the start of `from`'),
  closing: statementBalances.describe('Balances at the end of `to` (now, when `to` is today)'),
  entries: z.array(statementEntry).describe('Oldest first'),
});
export type StatementResponse = z.infer<typeof statementResponse>;
export type StatementEntry = z.infer<typeof statementEntry>;
export type StatementBalances = z.infer<typeof statementBalances>;

/** The CSV's columns, in order: amounts in reais with two decimals and in cents. */
export const STATEMENT_CSV_COLUMNS = [
  'id',
  'occurredAt',
  'type',
  'description',
  'amount',
  'amountCents',
  'availableAfter',
  'availableAfterCents',
  'pendingAfter',
  'pendingAfterCents',
  'blockedAfter',
  'blockedAfterCents',
  'chargeId',
  'withdrawId',
  'refundId',
  'infractionId',
] as const;
