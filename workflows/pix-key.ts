/**
 * `pixkey-<id>`: registers one PIX key at the acquirer
 * (docs/architecture.md "PIX keys: registration and activation"). The acquirer then activates it by callback. The registration is an activity retried
 * for hours, so an acquirer outage only delays it; the reconciler starts this workflow again for any
 * key still unregistered (e.g. one added by the ops CLI, or after the retries ran out).
 */
import { proxyActivities } from '@temporalio/workflow';
import type { PixKeyActivities } from '../activities/pix-keys';
import { ACQUIRER_RETRY } from './retry-policies';

const { registerPixKey } = proxyActivities<PixKeyActivities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '6 hours',
  // A refusal (4xx) is already an outcome of the activity (the key becomes INACTIVE); what still
  // throws final is bad credentials or an off-protocol answer.
  retry: { ...ACQUIRER_RETRY, nonRetryableErrorTypes: ['AcquirerRejectedError'] },
});

export async function pixKeyRegistrationWorkflow(input: { pixKeyId: string }): Promise<string> {
  return registerPixKey(input.pixKeyId);
}
