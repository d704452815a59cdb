/**
 * Response shapes every part of the API shares: the error body, the bare `{message}` answer and the
 * probes. The OpenAPI document (src/openapi/document.ts) is generated from these and from the
 * response schemas beside each request schema in src/contracts.
 */
import { z } from 'zod';

/** An instant as the API writes it (`Date#toISOString`). */
export const isoTime = z.iso.datetime();

/**
 * Every error has at least `message` (DECISIONS "Status codes and errors"); other fields may be
 * added (a code, a request id), so the shape stays open to them.
 */
export const errorBody = z.looseObject({ message: z.string() }).describe('Every error has this shape');
export const messageBody = z.object({ message: z.string() });

export const health = z.object({ status: z.literal('ok') });
export const readiness = z.object({ status: z.literal('ok'), checks: z.record(z.string(), z.enum(['ok', 'failed'])) });
