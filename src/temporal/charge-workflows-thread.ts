/**
 * Thread entry of `offThreadChargeWorkflows`: a Temporal client of its own, serving the
 * ChargeWorkflows calls of the API's main thread (docs/performance.md "Where a charge's time goes").
 */
import { workerData } from 'node:worker_threads';
import { serveThreadRpc } from '../lib/threads';
import { chargeWorkflowClient, type ChargeWorkflows } from './clients/charge';
import { connectTemporalClient, type TemporalSecurity } from './connection';

export interface ChargeWorkflowsThreadData {
  address: string;
  namespace: string;
  taskQueue: string;
  searchAttributes: boolean;
  /** TLS and API key of the main thread's client (PEM bytes cross as they are). */
  security?: TemporalSecurity;
}

serveThreadRpc(async () => {
  const data = workerData as ChargeWorkflowsThreadData;
  const temporal = await connectTemporalClient(data.address, data.namespace, { security: data.security });
  const workflows: ChargeWorkflows = chargeWorkflowClient(temporal.client, data.taskQueue, {
    searchAttributes: data.searchAttributes,
  });
  return {
    handlers: {
      start: workflows.start,
      paymentReceived: workflows.paymentReceived,
      cancelRequested: workflows.cancelRequested,
      refundRequested: workflows.refundRequested,
      refundSettled: workflows.refundSettled,
      askAcquirer: workflows.askAcquirer,
    },
    close: () => temporal.close(),
  };
});
