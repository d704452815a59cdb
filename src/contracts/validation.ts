/**
 * Validation with zod, shared by routes, services, the ops CLI and the OpenAPI document. Schemas are
 * named exports of the modules beside this one; `validate` turns a failure into a 400 whose message
 * names the offending field, e.g.
 * `amount must be an integer` or `customer.name is required`.
 *
 * Unknown fields are dropped (z.object strips them), wrong types are never coerced: an amount of
 * "100" or 100.5 is a 400 (docs/api.md "Errors").
 */
import { z } from 'zod';
import { validationError } from '../lib/errors';

type Issue = z.core.$ZodIssue;

const ARTICLE: Record<string, string> = {
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function fieldName(path: PropertyKey[]): string {
  return path
    .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
    .join('.')
    .replace(/\.\[/g, '[');
}

function sizeLimit(issue: Extract<Issue, { code: 'too_big' | 'too_small' }>): string {
  const big = issue.code === 'too_big';
  const bound = big ? issue.maximum : issue.minimum;
  const inclusive = issue.inclusive !== false;
  switch (issue.origin) {
    case 'string':
      return `must be ${big ? 'at most' : 'at least'} ${String(bound)} characters long`;
    case 'array':
    case 'set':
      return `must have ${big ? 'at most' : 'at least'} ${String(bound)} items`;
    default:
      return `must be ${big ? (inclusive ? '<=' : '<') : inclusive ? '>=' : '>'} ${String(bound)}`;
  }
}

/** A short English sentence naming the field and what is wrong with it. */
export function describeIssue(issue: Issue, subject: string): string {
  const field = fieldName(issue.path);
  if (field === '') {
    if (issue.code === 'invalid_type') return `${subject} must be a JSON object`;
    return `${subject}: ${issue.message}`;
  }
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return `${field} is required`;
      return `${field} must be ${ARTICLE[issue.expected] ?? issue.expected}`;
    case 'too_big':
    case 'too_small':
      return `${field} ${sizeLimit(issue)}`;
    case 'invalid_value':
      return `${field} must be one of ${issue.values.map(String).join(', ')}`;
    case 'invalid_format':
      // Regex checks carry a message written for clients; named formats (email, uuid…) do not.
      return issue.format === 'regex' ? `${field} ${issue.message}` : `${field} must be a valid ${issue.format}`;
    case 'not_multiple_of':
      return `${field} must be a multiple of ${String(issue.divisor)}`;
    case 'unrecognized_keys':
      return `${field} has unknown keys`;
    default:
      // custom refinements carry their own message, written for clients.
      return `${field} ${issue.message}`;
  }
}

/**
 * The `param` of a failed validation (docs/api.md "Errors"): the field's path, or the header's name
 * when the subject is a header (`Header x-idempotency-key`); none for a body that is not an object.
 */
export function paramOf(issue: Issue | undefined, subject: string): string | undefined {
  const field = issue ? fieldName(issue.path) : '';
  if (field !== '') return field;
  return subject.startsWith('Header ') ? subject.slice('Header '.length) : undefined;
}

export function validate<S extends z.ZodType>(schema: S, input: unknown, subject: string): z.output<S> {
  // reportInput lets us tell "missing" from "wrong type"; the input never leaves this function.
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  const first = result.error.issues[0];
  throw validationError(first ? describeIssue(first, subject) : `Invalid ${subject}`, paramOf(first, subject));
}

// ---- building blocks shared by the route schemas -------------------------------------------

/**
 * A string that PostgreSQL can store: no NUL characters (text columns refuse them, which would
 * otherwise surface as a 500) and bounded length.
 */
export function text(opts: { min?: number; max: number }): z.ZodString {
  let s = z.string();
  if (opts.min !== undefined) s = s.min(opts.min);
  return s.max(opts.max).refine((v) => !v.includes('\u0000'), { message: 'must not contain NUL characters' });
}

/** Integer cents, never a string or a fraction. Bounded so that sums stay exact in a double. */
export const cents = z.int().min(-1_000_000_000_00).max(1_000_000_000_00);

/** `x-idempotency-key` on money-moving requests (charges, refunds, withdrawals, adjustments). */
export const idempotencyKeyHeader = text({ min: 1, max: 64 }).optional();

/** Opaque public id in a path parameter. */
export const idParam = text({ min: 1, max: 64 });

/** Integer query parameters arrive as strings; accept only plain decimal digits (no more than `max` has). */
export function intQuery(def: number, min: number, max: number) {
  return z
    .string()
    .regex(new RegExp(`^\\d{1,${String(max).length}}$`), { message: 'must be an integer' })
    .transform(Number)
    .pipe(z.int().min(min).max(max))
    .optional()
    .transform((v) => v ?? def);
}

/** The largest page any list answers (`limit`). */
export const MAX_PAGE_LIMIT = 100;

/**
 * The largest `page`: pages start at 1 with no upper bound in the contract; this one only keeps
 * `(page - 1) × limit` an exact integer (below 2^53).
 */
export const MAX_PAGE = 9_999_999_999_999;

export const paginationQuery = z.object({
  page: intQuery(1, 1, MAX_PAGE),
  limit: intQuery(20, 1, MAX_PAGE_LIMIT),
});

/**
 * How deep an OFFSET page may reach (docs/api.md "Pagination limits"): a page's rows are found by
 * skipping the ones before it, so page 1,000,000 of a long list would be a cheap request that
 * costs the database a walk of its whole history. A page past the end holds no rows and is never
 * refused: it is answered empty, with its total, without any walk.
 */
export const MAX_LIST_DEPTH = 10_000;

/** Whether a page holds rows, all within `MAX_LIST_DEPTH`: only then is it read. */
export function pageIsRead(offset: number, limit: number, total: number): boolean {
  return offset < total && Math.min(offset + limit, total) <= MAX_LIST_DEPTH;
}

/** 400 for a page that holds rows past `MAX_LIST_DEPTH` (never for a page past the end). */
export function assertPageWithinDepth(page: number, limit: number, total: number): void {
  const offset = (page - 1) * limit;
  if (offset < total && Math.min(offset + limit, total) > MAX_LIST_DEPTH) {
    throw validationError(
      `page is too deep: only the first ${MAX_LIST_DEPTH} items of a list are served by page; narrow the list with a filter`,
      'page',
    );
  }
}
