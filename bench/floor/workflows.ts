/**
 * The Temporal steps of a payment's way to the merchant and nothing else (docs/performance.md
 * "What the Temporal steps alone cost"): a charge-shaped run woken by signal-with-start records the
 * payment in one activity, and a delivery-shaped run POSTs it in one more. The activities do no
 * database work, so the figures are a floor under the real path, not a model of it. The `Local`
 * pair runs the same activities as local activities (one workflow task per run instead of two), to
 * measure what that design would save.
 */
import { condition, defineSignal, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { FloorActivities } from './activities';

export const floorPaidSignal = defineSignal<[{ paymentId: string }]>('paid');

const { floorRecord, floorDeliver } = proxyActivities<FloorActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

const local = proxyLocalActivities<FloorActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

async function paid(): Promise<string> {
  let paymentId: string | undefined;
  setHandler(floorPaidSignal, (p) => void (paymentId = p.paymentId));
  await condition(() => paymentId !== undefined);
  return paymentId as string;
}

export async function floorChargeWorkflow(): Promise<void> {
  await floorRecord(await paid(), 'floorDeliveryWorkflow');
}

export async function floorDeliveryWorkflow(paymentId: string): Promise<void> {
  await floorDeliver(paymentId);
}

/** One run per payment: the recording activity POSTs the payment itself. */
export async function floorChargeOneRunWorkflow(): Promise<void> {
  await floorRecord(await paid(), '');
}

export async function floorChargeLocalWorkflow(): Promise<void> {
  await local.floorRecord(await paid(), 'floorDeliveryLocalWorkflow');
}

export async function floorDeliveryLocalWorkflow(paymentId: string): Promise<void> {
  await local.floorDeliver(paymentId);
}
