/** Inputs of the operator-case commands (docs/operations.md "Operator cases"), shared by the ops CLI and tests. */
import { z } from 'zod';
import { OPERATOR_CASE_ACTIONS, OPERATOR_CASE_KINDS, OPERATOR_CASE_STATUSES } from './statuses';

export const operatorCaseListQuery = z.object({
  status: z.enum(OPERATOR_CASE_STATUSES).optional(),
  kind: z.enum(OPERATOR_CASE_KINDS).optional(),
  subjectId: z.string().min(1).max(100).optional(),
  limit: z.int().min(1).max(1000).optional(),
});

export const resolveOperatorCaseBody = z.object({
  action: z.enum(OPERATOR_CASE_ACTIONS),
  note: z.string().max(500).optional(),
});
