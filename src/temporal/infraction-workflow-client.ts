/**
 * How the API side talks to `infraction-<id>` workflows (docs/operations.md "MED infractions"): every acquirer
 * update is signal-with-start, so the first callback starts the workflow and a later one reaches
 * it — or starts a fresh run that resumes from the database if the previous one has closed.
 */
import { recordWorkflowStartFailure } from '../observability/metrics';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { AcquirerInfractionUpdate, InfractionWorkflowInput } from '../../workflows/infraction-types';
import { ENTITY_ID_ATTRIBUTE, MERCHANT_ID_ATTRIBUTE } from './charge-workflow-client';
import { infractionWorkflowId } from './workflow-ids';

export interface InfractionRef {
  id: string;
  merchantId: string;
}

export interface InfractionWorkflows {
  start(infraction: InfractionRef): Promise<void>;
  acquirerUpdate(infraction: InfractionRef, update: AcquirerInfractionUpdate): Promise<void>;
  /** Wakes the workflow to apply an operator's decision (docs/operations.md "Operator cases"). */
  operatorDecided(infraction: InfractionRef): Promise<void>;
}

export function infractionWorkflowClient(
  client: Client,
  taskQueue: string,
  opts: { searchAttributes?: boolean } = {},
): InfractionWorkflows {
  const base = (inf: InfractionRef) => {
    const typedSearchAttributes: SearchAttributePair[] = [
      { key: MERCHANT_ID_ATTRIBUTE, value: inf.merchantId },
      { key: ENTITY_ID_ATTRIBUTE, value: inf.id },
    ];
    return {
      taskQueue,
      workflowId: infractionWorkflowId(inf.id),
      args: [{ infractionId: inf.id }] as [InfractionWorkflowInput],
      memo: { infractionId: inf.id, merchantId: inf.merchantId },
      ...(opts.searchAttributes === false ? {} : { typedSearchAttributes }),
    };
  };
  return {
    async start(inf) {
      try {
        await client.workflow.start('infractionWorkflow', base(inf));
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
          recordWorkflowStartFailure('infractionWorkflow');
          throw err;
        }
      }
    },
    async acquirerUpdate(inf, update) {
      await client.workflow.signalWithStart('infractionWorkflow', {
        ...base(inf),
        signal: 'acquirerUpdate',
        signalArgs: [update],
      });
    },
    async operatorDecided(inf) {
      await client.workflow.signalWithStart('infractionWorkflow', {
        ...base(inf),
        signal: 'operatorDecided',
        signalArgs: [],
      });
    },
  };
}
