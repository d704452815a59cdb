/** Inputs of the ops CLI's `workflows` commands (docs/operations.md "Watching workflows"). */
import { z } from 'zod';
import { WORKFLOW_EXECUTION_STATUSES, WORKFLOW_KINDS } from './statuses';

/**
 * Ids go into a visibility query as quoted literals: only the characters our ids and workflow ids
 * use (`mch_…`, `charge-chg_…`), so no value can close the quote and change the query.
 */
const queryId = z.string().regex(/^[A-Za-z0-9_.:-]{1,200}$/, { message: 'must be 1–200 letters, digits, _ . : or -' });

export const workflowListQuery = z.object({
  merchantId: queryId.optional(),
  status: z.enum(WORKFLOW_EXECUTION_STATUSES).optional(),
  // `type`, as the CLI option: a kind of workflow (`charge`), not the workflow type name.
  type: z.enum(WORKFLOW_KINDS).optional(),
  limit: z.int().min(1).max(1000).default(50),
});
export type WorkflowListQuery = z.output<typeof workflowListQuery>;

export const workflowShowQuery = z.object({
  workflowId: queryId,
  runId: z
    .string()
    .regex(/^[A-Za-z0-9-]{1,100}$/, { message: 'must be a run id (letters, digits and -)' })
    .optional(),
});
