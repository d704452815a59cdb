/**
 * ChargeWorkflows served by a thread of their own (docs/performance.md "Where a charge's time goes"): every charge
 * creation starts a workflow, and the Temporal client's gRPC call (request building, protobuf,
 * HTTP/2) cost the API's event loop about as much as the rest of the request. Here the main thread
 * pays one postMessage each way; the thread holds its own connection to the same Temporal, so this
 * works unchanged against a real cluster.
 *
 * The calls keep their meaning: a start that finds the run already there is success, any other
 * failure rejects (and is counted in `pixflow_workflow_start_failures_total` here, since the
 * thread's metrics registry is not the one /metrics serves).
 */
import path from 'node:path';
import { ThreadRpc } from '../lib/threads';
import { recordWorkflowStartFailure } from '../observability/metrics';
import type { ChargeWorkflows } from './clients/charge';
import type { ChargeWorkflowsThreadData } from './charge-workflows-thread';

export interface OffThreadChargeWorkflows {
  workflows: ChargeWorkflows;
  close(): Promise<void>;
}

export async function offThreadChargeWorkflows(data: ChargeWorkflowsThreadData): Promise<OffThreadChargeWorkflows> {
  const spawn = (): Promise<ThreadRpc> =>
    ThreadRpc.start(path.join(__dirname, 'charge-workflows-thread'), __filename, {
      name: 'charge-workflows',
      workerData: data,
    });
  let rpc = await spawn();
  // A thread that died (it should not) is replaced on the next call; the calls it took with it
  // were rejected, and the charge reconciler starts any workflow they missed.
  let respawn: Promise<ThreadRpc> | undefined;
  let closed = false;
  const current = async (): Promise<ThreadRpc> => {
    if (rpc.alive || closed) return rpc;
    respawn ??= spawn().finally(() => (respawn = undefined));
    rpc = await respawn;
    return rpc;
  };
  const call = async (method: keyof ChargeWorkflows, args: unknown[]): Promise<void> => {
    try {
      await (await current()).call<void>(method, args);
    } catch (err) {
      recordWorkflowStartFailure('chargeWorkflow');
      throw err;
    }
  };
  return {
    workflows: {
      start: (charge, opts) => call('start', [charge, opts]),
      paymentReceived: (charge, notice) => call('paymentReceived', [charge, notice]),
      cancelRequested: (charge) => call('cancelRequested', [charge]),
      refundRequested: (charge, refundId) => call('refundRequested', [charge, refundId]),
      refundSettled: (charge, notice) => call('refundSettled', [charge, notice]),
      askAcquirer: (charge) => call('askAcquirer', [charge]),
    },
    close: async () => {
      closed = true;
      await (respawn ?? Promise.resolve());
      await rpc.close();
    },
  };
}
