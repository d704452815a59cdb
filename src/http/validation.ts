/**
 * The HTTP side of validation: read a Koa request's body, query or path parameters through a
 * schema from src/contracts (a failure is a 400 naming the field).
 */
import type { z } from 'zod';
import { validate } from '../contracts/validation';
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
