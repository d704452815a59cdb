/**
 * One payment's way to the receiver as the same chain of marks for the service and for its floor
 * (docs/performance.md "Payment to webhook: the timeline"), read from the server's event times of
 * the charge-shaped and delivery-shaped runs, so the two tables compare hop by hop.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { percentile } from './stats';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const { EventType } = temporal.api.enums.v1;

/** The hops, in order; each is the time from the previous mark to this one. */
export const HOPS = [
  'payment → charge run signalled',
  '→ its workflow task started',
  '→ record activity scheduled',
  '→ delivery run started',
  '→ its workflow task started',
  '→ delivery attempt scheduled',
  '→ receiver has the webhook',
] as const;

export interface HopFigure {
  hop: (typeof HOPS)[number];
  p50Ms: number;
  p90Ms: number;
}

const ms = (e: HistoryEvent | undefined): number => {
  const t = e?.eventTime;
  if (!t) return NaN;
  return Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
};

export async function historyOf(client: Client, workflowId: string): Promise<HistoryEvent[]> {
  const h = await client.workflow.getHandle(workflowId).fetchHistory();
  return h.events ?? [];
}

const first = (events: HistoryEvent[], type: number, after = -Infinity): HistoryEvent | undefined =>
  events.find((e) => e.eventType === type && ms(e) >= after);

/**
 * The first activity of `activityType` (any, when omitted) scheduled. Its started event is not a
 * mark: the server writes it with the outcome, and its time read 0 ms after scheduling here.
 */
const scheduled = (events: HistoryEvent[], activityType?: string): HistoryEvent | undefined =>
  events.find(
    (e) =>
      e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
      (activityType === undefined || e.activityTaskScheduledEventAttributes?.activityType?.name === activityType),
  );

/** The hops of one payment made at `t0` and received at `arrivedAt`. */
export function paymentHops(
  run: { charge: HistoryEvent[]; delivery: HistoryEvent[]; recordActivity: string },
  t0: number,
  arrivedAt: number,
): number[] {
  const signalled = first(run.charge, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, t0 - 1000);
  const marks = [
    t0,
    ms(signalled),
    ms(first(run.charge, EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED, ms(signalled))),
    ms(scheduled(run.charge, run.recordActivity)),
    ms(first(run.delivery, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)),
    ms(first(run.delivery, EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED)),
    ms(scheduled(run.delivery)),
    arrivedAt,
  ];
  return marks.slice(1).map((t, k) => t - (marks[k] as number));
}

export function hopFigures(rows: number[][]): HopFigure[] {
  return HOPS.map((hop, k) => {
    const column = rows.map((r) => r[k] as number);
    return { hop, p50Ms: percentile(column, 50), p90Ms: percentile(column, 90) };
  });
}
