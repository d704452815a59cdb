import {
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  proxyActivities,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { ConformanceActivities } from './activities';

const { double } = proxyActivities<ConformanceActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
});

/** Adds to the total; the validator rejects negative amounts before the update is accepted. */
export const addUpdate = defineUpdate<number, [number]>('add');
/** Runs an activity and a short timer inside the handler, then adds. */
export const addDoubledUpdate = defineUpdate<number, [number]>('addDoubled');
/** Completes only once the workflow is told to finish. */
export const untilFinishedUpdate = defineUpdate<number>('untilFinished');
export const finishUpdatesSignal = defineSignal('finishUpdates');
export const updateTotalQuery = defineQuery<number>('updateTotal');

export async function updatable(): Promise<number> {
  let total = 0;
  let finished = false;
  setHandler(
    addUpdate,
    (n: number) => {
      total += n;
      return total;
    },
    {
      validator: (n: number) => {
        if (n < 0) throw new Error(`negative amounts are rejected: ${n}`);
      },
    },
  );
  setHandler(addDoubledUpdate, async (n: number) => {
    const d = await double(n);
    await sleep(50);
    total += d;
    return total;
  });
  setHandler(untilFinishedUpdate, async () => {
    await condition(() => finished);
    return total;
  });
  setHandler(finishUpdatesSignal, () => {
    finished = true;
  });
  setHandler(updateTotalQuery, () => total);
  await condition(() => finished);
  return total;
}

/** Early return: the update answers as soon as the first step is done; the workflow goes on. */
export const beginUpdate = defineUpdate<number, [number]>('begin');

export async function earlyReturn(): Promise<string> {
  let reference: number | undefined;
  let input: number | undefined;
  let finished = false;
  setHandler(beginUpdate, async (n: number) => {
    input = n;
    await condition(() => reference !== undefined);
    return reference ?? -1;
  });
  setHandler(finishUpdatesSignal, () => {
    finished = true;
  });
  await condition(() => input !== undefined);
  reference = await double(input ?? 0);
  await condition(() => finished);
  return `finished ${reference}`;
}
