/**
 * Response shapes every part of the API shares: the error body, the bare `{message}` answer and the
 * probes. The OpenAPI document (src/openapi/document.ts) is generated from these and from the
 * response schemas beside each request schema in src/contracts.
 */
import { z } from 'zod';
import { errorBody as errorBodyContract } from './errors';

/** An instant as the API writes it (`Date#toISOString`). */
export const isoTime = z.iso.datetime();

/**
 * Every error answer: `{message, code, requestId, param?}` (docs/api.md "Errors"). Open to more
 * fields (the readiness probe's 503 adds its `checks`), so a client tolerates what we add later.
 */
export const errorBody = errorBodyContract.loose().describe('Every error has this shape (docs/api.md "Errors")');
export const messageBody = z.object({ message: z.string() });

export const health = z.object({ status: z.literal('ok') });
export const readiness = z.object({ status: z.literal('ok'), checks: z.record(z.string(), z.enum(['ok', 'failed'])) });
