import type { WorkflowKind } from '../contracts/statuses';
import type * as workflows from '../../workflows';

/** The workflow type name of each kind: a key of workflows/index.ts, so a rename fails to compile. */
export const WORKFLOW_TYPES = {
  charge: 'chargeWorkflow',
  withdrawal: 'withdrawalWorkflow',
  infraction: 'infractionWorkflow',
  'webhook-delivery': 'webhookDeliveryWorkflow',
  'pix-key': 'pixKeyRegistrationWorkflow',
} as const satisfies Record<WorkflowKind, keyof typeof workflows>;
