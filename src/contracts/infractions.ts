/**
 * MED infraction contracts (docs/api.md "Infractions", docs/operations.md "MED infractions"): the
 * merchant's list query and defense, the sandbox's request bodies, and the infraction as the API
 * answers it.
 */
import { z } from 'zod';
import { DEFENSE_FILE_TYPES, DEFENSE_STATUSES, INFRACTION_ANALYSIS_RESULTS, INFRACTION_STATUSES } from './statuses';
import { idParam, paginationQuery, text } from './validation';
import { isoTime } from './common';

/** A defense's limits (docs/api.md "Infractions"): its text, its files and their total size. */
export const DEFENSE_TEXT_MAX = 1_000;
export const DEFENSE_MAX_FILES = 5;
export const DEFENSE_MAX_TOTAL_BYTES = 10 * 1024 * 1024;

export const sandboxRaiseInfractionBody = z.object({
  chargeId: idParam,
  reason: text({ min: 1, max: 140 }).optional(),
  reportDetails: text({ min: 1, max: 2_000 }).optional(),
  /** The acquirer's answer once a defense reaches it; unset, it waits to be told (accept/reject). */
  analysisResult: z.enum(INFRACTION_ANALYSIS_RESULTS).optional(),
});
export type SandboxRaiseInfractionBody = z.infer<typeof sandboxRaiseInfractionBody>;

export const listInfractionsQuery = paginationQuery.extend({
  status: z.enum(INFRACTION_STATUSES).optional(),
});
export type ListInfractionsQuery = z.infer<typeof listInfractionsQuery>;

/** The text part of a defense (the files are checked by content in the service). */
export const defenseFields = z.object({
  defense: text({ min: 1, max: DEFENSE_TEXT_MAX }).refine((v) => v.trim().length > 0, { message: 'must not be blank' }),
});

export const defenseFileParams = z.object({ id: idParam, defenseId: idParam, fileId: idParam });

// ---- responses -----------------------------------------------------------------------------

export const infraction = z.object({
  id: z.string(),
  chargeId: z.string().nullable(),
  endToEndId: z.string().nullable(),
  amount: z.int(),
  reason: z.string().nullable(),
  status: z.enum(INFRACTION_STATUSES),
  blockedAmount: z.int(),
  createdAt: isoTime,
});

export const sandboxInfractionResponse = z.object({ message: z.string(), infraction });

export const defenseFile = z.object({
  id: z.string(),
  name: z.string(),
  mimeType: z.enum(DEFENSE_FILE_TYPES),
  size: z.int(),
});

export const defense = z.object({
  id: z.string(),
  status: z.enum(DEFENSE_STATUSES),
  defense: z.string(),
  files: z.array(defenseFile),
  createdAt: isoTime,
});

export const infractionDetail = infraction.extend({
  reportDetails: z.string().nullable(),
  defenseDeadline: isoTime,
  refundedAmount: z.int(),
  analysisResult: z.enum(INFRACTION_ANALYSIS_RESULTS).nullable(),
  updatedAt: isoTime,
  defenses: z.array(defense),
});

export const listInfractionsResponse = z.object({
  page: z.int(),
  limit: z.int(),
  total: z.int(),
  infractions: z.array(infractionDetail),
});

export const getInfractionResponse = z.object({ infraction: infractionDetail });

export const createDefenseResponse = z.object({ defense });
