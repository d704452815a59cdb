/**
 * MED infraction contracts (docs/operations.md "MED infractions"): the sandbox's request body and the
 * infraction as the sandbox answers it.
 */
import { z } from 'zod';
import { INFRACTION_STATUSES } from './statuses';
import { idParam, text } from './validation';

export const sandboxRaiseInfractionBody = z.object({
  chargeId: idParam,
  reason: text({ min: 1, max: 140 }).optional(),
});

export const infraction = z.object({
  id: z.string(),
  chargeId: z.string().nullable(),
  endToEndId: z.string().nullable(),
  amount: z.int(),
  reason: z.string().nullable(),
  status: z.enum(INFRACTION_STATUSES),
  blockedAmount: z.int(),
  createdAt: z.iso.datetime(),
});

export const sandboxInfractionResponse = z.object({ message: z.string(), infraction });
