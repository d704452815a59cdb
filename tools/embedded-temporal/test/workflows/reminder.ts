import { proxyActivities, sleep } from '@temporalio/workflow';

export interface ReminderActivities {
  processOrder(): Promise<void>;
  sendReminder(): Promise<void>;
}

/**
 * The timer-reminder pattern of the Temporal docs: if processing takes longer than `remindAfterMs`,
 * send a reminder, then still wait for processing to finish.
 */
export async function orderWithReminder(remindAfterMs: number): Promise<{ reminded: boolean; elapsedMs: number }> {
  // Long enough that the activity's own timeout is not what time skips to.
  const { processOrder, sendReminder } = proxyActivities<ReminderActivities>({ startToCloseTimeout: '30 days' });
  const started = Date.now();
  let processing = true;
  const done = processOrder().then(() => {
    processing = false;
  });
  await Promise.race([done, sleep(remindAfterMs)]);
  let reminded = false;
  if (processing) {
    await sendReminder();
    reminded = true;
    await done;
  }
  return { reminded, elapsedMs: Date.now() - started };
}
