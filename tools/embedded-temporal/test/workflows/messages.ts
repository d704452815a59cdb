import { condition, defineQuery, defineSignal, setHandler, sleep, workflowInfo } from '@temporalio/workflow';

export const addSignal = defineSignal<[number]>('add');
export const finishSignal = defineSignal<[]>('finish');
export const totalQuery = defineQuery<number>('total');
export const infoQuery = defineQuery<{ workflowId: string; historyLength: number }>('info');

/** Sums `add` signals until `finish`; queryable while it runs. */
export async function accumulator(): Promise<number> {
  let total = 0;
  let done = false;
  setHandler(addSignal, (n) => {
    total += n;
  });
  setHandler(finishSignal, () => {
    done = true;
  });
  setHandler(totalQuery, () => total);
  setHandler(infoQuery, () => ({ workflowId: workflowInfo().workflowId, historyLength: workflowInfo().historyLength }));
  await condition(() => done);
  return total;
}

/** `condition()` with a timeout: true if signalled in time, false once the (virtual) timeout passes. */
export async function waitForFinish(timeoutMs: number): Promise<boolean> {
  let done = false;
  setHandler(finishSignal, () => {
    done = true;
  });
  return await condition(() => done, timeoutMs);
}

/** Sleeps for a long time (to be terminated or cancelled). */
export async function sleeper(ms: number): Promise<string> {
  await sleep(ms);
  return 'woke up';
}
