/**
 * The HTTP side of validation: read a Koa request's body, query or path parameters through a
 * schema from src/contracts (a failure is a 400 naming the field).
 */
import type { z } from 'zod';
import { idempotencyKeyHeader, validate } from '../contracts/validation';
import { validationError } from '../lib/errors';
import type { AppContext } from './types';

export function parseBody<S extends z.ZodType>(ctx: AppContext, schema: S): z.output<S> {
  return validate(schema, ctx.request.body, 'Request body');
}

export function parseQuery<S extends z.ZodType>(ctx: AppContext, schema: S): z.output<S> {
  return validate(schema, ctx.query, 'Query');
}

export function parseParams<S extends z.ZodType>(
  ctx: AppContext & { params?: Record<string, string> },
  schema: S,
): z.output<S> {
  return validate(schema, ctx.params ?? {}, 'Path');
}

/**
 * The request's idempotency key (docs/api.md "Idempotency"): `x-idempotency-key`, or the
 * `Idempotency-Key` integrators send to Stripe-like APIs; both at once must agree.
 */
export function idempotencyKeyOf(ctx: AppContext): string | undefined {
  const ours = ctx.get('x-idempotency-key') || undefined;
  const standard = ctx.get('idempotency-key') || undefined;
  if (ours !== undefined && standard !== undefined && ours !== standard) {
    throw validationError('Headers x-idempotency-key and Idempotency-Key differ: send one key', 'Idempotency-Key');
  }
  return validate(
    idempotencyKeyHeader,
    ours ?? standard,
    ours !== undefined ? 'Header x-idempotency-key' : 'Header Idempotency-Key',
  );
}

/** Answers a replay of an idempotency key: 200, `Idempotent-Replayed: true` (docs/api.md "Idempotency"). */
export function answerReplay(ctx: AppContext, body: unknown): void {
  ctx.status = 200;
  ctx.set('Idempotent-Replayed', 'true');
  ctx.body = body;
}
