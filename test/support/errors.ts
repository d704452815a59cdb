/**
 * The shape every error answer has (docs/api.md "Errors"): `{message, code, requestId}` plus
 * `param` when one field is at fault, and nothing else (no stack, SQL or internal names).
 */
import assert from 'node:assert/strict';
import { ERROR_CODES, type ErrorCode } from '../../src/contracts/errors';

const ALLOWED = new Set(['message', 'code', 'requestId', 'param']);

/**
 * Asserts `body` is an error answer; with `headers`, that its requestId is the `x-request-id`
 * header; with `code`, that it is that code. Returns the body, typed.
 */
export function assertErrorBody(
  body: unknown,
  what = '',
  opts: { code?: ErrorCode; status?: number; headers?: { get(name: string): string | null } } = {},
): { message: string; code: ErrorCode; requestId: string; param?: string } {
  const label = `${what}: ${JSON.stringify(body)}`;
  assert.ok(typeof body === 'object' && body !== null && !Array.isArray(body), label);
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b)) assert.ok(ALLOWED.has(key), `unexpected key ${key} in ${label}`);
  assert.equal(typeof b.message, 'string', label);
  assert.equal(typeof b.code, 'string', label);
  assert.ok(Object.hasOwn(ERROR_CODES, b.code as string), `unknown code in ${label}`);
  assert.equal(typeof b.requestId, 'string', label);
  assert.ok((b.requestId as string).length > 0, label);
  if (b.param !== undefined) assert.equal(typeof b.param, 'string', label);
  const code = b.code as ErrorCode;
  if (opts.code !== undefined) assert.equal(code, opts.code, label);
  if (opts.status !== undefined) assert.equal(ERROR_CODES[code].status, opts.status, label);
  if (opts.headers !== undefined) {
    assert.equal(opts.headers.get('x-request-id'), b.requestId, `x-request-id header vs requestId: ${label}`);
  }
  return b as { message: string; code: ErrorCode; requestId: string; param?: string };
}

/** The body without its requestId, to compare two error answers (each request has its own id). */
export function withoutRequestId(body: unknown): Record<string, unknown> {
  const { requestId: _requestId, ...rest } = body as Record<string, unknown>;
  return rest;
}
