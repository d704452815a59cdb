/**
 * How the API side talks to `infraction-<id>` workflows (docs/operations.md "MED infractions"): every acquirer
 * update is signal-with-start, so the first callback starts the workflow and a later one reaches
 * it — or starts a fresh run that resumes from the database if the previous one has closed.
 */
import type { Client } from '@temporalio/client';
import type { AcquirerInfractionUpdate, InfractionWorkflowInput } from '../../../workflows/infraction-types';
import { infractionWorkflowId } from '../workflow-ids';
import { workflowStarter } from './starter';

export interface InfractionRef {
  id: string;
  merchantId: string;
}

export interface InfractionWorkflows {
  start(infraction: InfractionRef): Promise<void>;
  acquirerUpdate(infraction: InfractionRef, update: AcquirerInfractionUpdate): Promise<void>;
  /** Wakes the workflow to apply an operator's decision (docs/operations.md "Operator cases"). */
  operatorDecided(infraction: InfractionRef): Promise<void>;
  /** Wakes the workflow to send the merchant's stored defense (docs/api.md "Infractions"). */
  defenseSubmitted(infraction: InfractionRef): Promise<void>;
}

export function infractionWorkflowClient(
  client: Client,
  taskQueue: string,
  opts: { searchAttributes?: boolean } = {},
): InfractionWorkflows {
  const run = workflowStarter(client, taskQueue, opts, {
    type: 'infractionWorkflow',
    workflowId: (inf: InfractionRef) => infractionWorkflowId(inf.id),
    input: (inf): InfractionWorkflowInput => ({ infractionId: inf.id }),
    memo: (inf) => ({ infractionId: inf.id, merchantId: inf.merchantId }),
    merchantId: (inf) => inf.merchantId,
    entityId: (inf) => inf.id,
  });
  return {
    async start(inf) {
      await run.start(inf);
    },
    acquirerUpdate: (inf, update) => run.signal(inf, 'acquirerUpdate', [update]),
    operatorDecided: (inf) => run.signal(inf, 'operatorDecided', []),
    defenseSubmitted: (inf) => run.signal(inf, 'defenseSubmitted', []),
  };
}
