/**
 * The floor's activities (bench/floor/workflows.ts): recording starts the delivery run, as the
 * dispatcher does once a payment's outbox row is committed; delivering is one POST over a
 * keep-alive connection to the benchmark's receiver.
 */
import http from 'node:http';
import type { Client } from '@temporalio/client';

export interface FloorActivities {
  /** Starts the delivery run of that type for the payment; `''`: POSTs it itself, no second run. */
  floorRecord(paymentId: string, deliveryType: string): Promise<void>;
  floorDeliver(paymentId: string): Promise<void>;
}

export function floorActivities(client: Client, taskQueue: string, receiverUrl: string): FloorActivities {
  const agent = new http.Agent({ keepAlive: true });
  return {
    async floorRecord(paymentId, deliveryType) {
      if (deliveryType === '') return post(paymentId);
      await client.workflow.start(deliveryType, {
        workflowId: `floor-delivery-${paymentId}`,
        taskQueue,
        args: [paymentId],
      });
    },
    floorDeliver: post,
  };

  function post(paymentId: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const body = JSON.stringify({ paymentId });
      const req = http.request(
        receiverUrl,
        { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve() : reject(new Error(`receiver answered ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }
}
