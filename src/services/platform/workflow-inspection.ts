/**
 * Workflow inspection for operators (docs/operations.md "Watching workflows"): every money
 * movement is a Temporal workflow, so its history is the record of what happened to it and when.
 * This module builds the visibility query of `npm run ops -- workflows list` and turns a history
 * into the table `workflows show` prints; the CLI only parses options and prints.
 */
import { createRequire } from 'node:module';
import { WorkflowNotFoundError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import * as proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';
import type { WorkflowExecutionStatus, WorkflowKind } from '../../contracts/statuses';
import type { WorkflowListQuery } from '../../contracts/workflow-inspection';
import { invalid, notFound } from '../../lib/errors';
import { MERCHANT_ID_ATTRIBUTE } from '../../temporal/clients/charge';
import { WORKFLOW_TYPES } from '../../temporal/workflow-types';
import { errorMessage } from '../../lib/error-message';

const { temporal } = proto;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;
type Failure = proto.temporal.api.failure.v1.IFailure;

export { WORKFLOW_TYPES };

const KIND_OF_TYPE = new Map<string, WorkflowKind>(
  Object.entries(WORKFLOW_TYPES).map(([kind, type]) => [type, kind as WorkflowKind]),
);

/** The SDK's status names, as visibility queries spell them (and `--status` takes them). */
const STATUS_NAMES: Record<WorkflowExecutionInfo['status']['name'], WorkflowExecutionStatus | string> = {
  RUNNING: 'Running',
  COMPLETED: 'Completed',
  FAILED: 'Failed',
  CANCELLED: 'Canceled',
  TERMINATED: 'Terminated',
  CONTINUED_AS_NEW: 'ContinuedAsNew',
  TIMED_OUT: 'TimedOut',
  PAUSED: 'Paused',
  UNSPECIFIED: 'Unspecified',
  UNKNOWN: 'Unknown',
};

/**
 * The visibility query of a list: equality terms joined by AND, e.g.
 * `MerchantId = 'mch_…' AND ExecutionStatus = 'Running' AND WorkflowType = 'chargeWorkflow'`.
 *
 * No `ORDER BY`: only Elasticsearch visibility accepts it (SQL visibility and Temporal Cloud refuse
 * the whole query); `listWorkflows` sorts what it gets. Values are validated ids; quotes are escaped anyway.
 */
export function buildVisibilityQuery(q: Pick<WorkflowListQuery, 'merchantId' | 'status' | 'type'>): string {
  const literal = (v: string): string => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const terms: string[] = [];
  if (q.merchantId !== undefined) terms.push(`${MERCHANT_ID_ATTRIBUTE.name} = ${literal(q.merchantId)}`);
  if (q.status !== undefined) terms.push(`ExecutionStatus = ${literal(q.status)}`);
  if (q.type !== undefined) terms.push(`WorkflowType = ${literal(WORKFLOW_TYPES[q.type])}`);
  return terms.join(' AND ');
}

export interface WorkflowSummary {
  workflowId: string;
  runId: string;
  /** The workflow type name (`chargeWorkflow`) and its kind (`charge`; null for a type we do not run). */
  type: string;
  kind: WorkflowKind | null;
  status: WorkflowExecutionStatus | string;
  startTime: string;
  closeTime: string | null;
  /** From the MerchantId search attribute, else the memo every pixflow workflow carries. */
  merchantId: string | null;
  historyLength: number;
}

export function summarize(info: WorkflowExecutionInfo): WorkflowSummary {
  const fromAttribute = info.typedSearchAttributes.get(MERCHANT_ID_ATTRIBUTE);
  const fromMemo = info.memo?.merchantId;
  return {
    workflowId: info.workflowId,
    runId: info.runId,
    type: info.type,
    kind: KIND_OF_TYPE.get(info.type) ?? null,
    status: STATUS_NAMES[info.status.name],
    startTime: info.startTime.toISOString(),
    closeTime: info.closeTime?.toISOString() ?? null,
    merchantId: fromAttribute ?? (typeof fromMemo === 'string' ? fromMemo : null),
    historyLength: info.historyLength,
  };
}

/** The runs matching `q`, at most `q.limit`, newest start first. */
export async function listWorkflows(
  client: Client,
  q: WorkflowListQuery,
): Promise<{ query: string; workflows: WorkflowSummary[] }> {
  const query = buildVisibilityQuery(q);
  const found: WorkflowSummary[] = [];
  try {
    for await (const info of client.workflow.list({ query, pageSize: q.limit })) {
      found.push(summarize(info));
      if (found.length >= q.limit) break;
    }
  } catch (err) {
    if (grpcCode(err) !== INVALID_ARGUMENT) throw err;
    // A filter this Temporal cannot answer (e.g. MerchantId where the search attribute is not
    // registered or indexed): say which query, and why the server refused it.
    const hint =
      q.merchantId !== undefined
        ? ` (--merchant needs the ${MERCHANT_ID_ATTRIBUTE.name} search attribute registered and indexed)`
        : '';
    throw invalid(`Temporal refused the visibility query "${query}": ${grpcDetails(err)}${hint}`);
  }
  found.sort((a, b) => (a.startTime < b.startTime ? 1 : a.startTime > b.startTime ? -1 : 0));
  return { query, workflows: found };
}

/** A run's whole history (the latest run of `workflowId` unless `runId` is given). */
export async function fetchWorkflowHistory(client: Client, workflowId: string, runId?: string): Promise<History> {
  try {
    return await client.workflow.getHandle(workflowId, runId).fetchHistory();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || grpcCode(err) === NOT_FOUND) {
      throw notFound(`Workflow ${workflowId}${runId ? ` run ${runId}` : ''} not found`);
    }
    throw err;
  }
}

/**
 * Proto3 JSON of a history, as the SDK's `historyToJSON`/`historyFromJSON` do it, but with the
 * protobufjs that built @temporalio/proto's types. Those SDK functions fail in this install ("type
 * must be a Type"): @grpc/grpc-js keeps protobufjs 7 at the top of node_modules, so npm gives
 * @temporalio/common and @temporalio/proto a protobufjs 8 each, and the one in common does not
 * recognise the types of the other.
 */
interface ProtoJson {
  toJson(type: unknown, message: unknown): unknown;
  fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): History;
}
let historyJson: { codec: ProtoJson; type: unknown } | undefined;
function historyCodec(): { codec: ProtoJson; type: unknown } {
  if (!historyJson) {
    const codec = createRequire(require.resolve('@temporalio/proto'))('protobufjs/ext/protojson') as ProtoJson;
    const root = patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown };
    historyJson = { codec, type: root.lookupType('temporal.api.history.v1.History') };
  }
  return historyJson;
}

/** The history as proto3 JSON: what the Temporal UI downloads and `Worker.runReplayHistory` replays. */
export function historyAsJson(history: History): string {
  const { codec, type } = historyCodec();
  return JSON.stringify(codec.toJson(type, temporal.api.history.v1.History.fromObject(history)), null, 2);
}

/** A history back from its proto3 JSON (fields a newer server added are ignored). */
export function historyFromJson(json: unknown): History {
  const { codec, type } = historyCodec();
  return codec.fromJson(type, json, { ignoreUnknownFields: true });
}

/** One history event, as a line of the table. */
export interface HistoryRow {
  time: string;
  eventId: number;
  /** `ActivityTaskScheduled`, as the Temporal UI names event types. */
  eventType: string;
  /** The activity type, timer, signal, marker or workflow type the event is about. */
  detail: string;
  attempt: number | null;
  failure: string | null;
}

/** The events of a history as rows: an activity's later events named after its scheduling. */
export function historyRows(history: History): HistoryRow[] {
  const activities = new Map<number, { name: string; attempt: number | null }>();
  return (history.events ?? []).map((e) => {
    const eventId = toNumber(e.eventId);
    const row = describeEvent(e, activities);
    if (e.activityTaskScheduledEventAttributes) activities.set(eventId, { name: row.detail, attempt: null });
    return {
      time: e.eventTime
        ? new Date(toNumber(e.eventTime.seconds) * 1000 + Math.floor((e.eventTime.nanos ?? 0) / 1e6)).toISOString()
        : '',
      eventId,
      eventType: eventTypeName(e.eventType),
      ...row,
    };
  });
}

/** The rows as a fixed-width table with a header line. */
export function formatHistoryTable(rows: HistoryRow[]): string {
  const header = ['TIME', 'ID', 'EVENT', 'DETAIL', 'ATTEMPT', 'FAILURE'];
  const cells = rows.map((r) => [
    r.time,
    String(r.eventId),
    r.eventType,
    r.detail,
    r.attempt === null ? '' : String(r.attempt),
    r.failure ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: string[]): string =>
    c
      .map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...cells.map(line)].join('\n');
}

type EventDescription = Omit<HistoryRow, 'time' | 'eventId' | 'eventType'>;
type ActivityNames = Map<number, { name: string; attempt: number | null }>;
const NO_DETAIL: EventDescription = { detail: '', attempt: null, failure: null };

function describeEvent(a: HistoryEvent, activities: ActivityNames): EventDescription {
  return describeRunEvent(a) ?? describeActivityEvent(a, activities) ?? describeOtherEvent(a) ?? NO_DETAIL;
}

/** The run's own events: started, signaled, failed, continued, its workflow tasks. */
function describeRunEvent(a: HistoryEvent): EventDescription | undefined {
  const none = NO_DETAIL;
  if (a.workflowExecutionStartedEventAttributes) {
    const s = a.workflowExecutionStartedEventAttributes;
    return {
      detail: s.workflowType?.name ?? '',
      attempt: s.attempt ?? null,
      failure: s.continuedFailure ? failureMessage(s.continuedFailure) : null,
    };
  }
  if (a.workflowExecutionSignaledEventAttributes)
    return { ...none, detail: `signal ${a.workflowExecutionSignaledEventAttributes.signalName ?? ''}` };
  if (a.workflowExecutionFailedEventAttributes)
    return { ...none, failure: failureMessage(a.workflowExecutionFailedEventAttributes.failure) };
  if (a.workflowExecutionTerminatedEventAttributes)
    return { ...none, failure: a.workflowExecutionTerminatedEventAttributes.reason || null };
  if (a.workflowExecutionCancelRequestedEventAttributes)
    return { ...none, detail: a.workflowExecutionCancelRequestedEventAttributes.cause ?? '' };
  if (a.workflowExecutionContinuedAsNewEventAttributes) {
    const c = a.workflowExecutionContinuedAsNewEventAttributes;
    return { ...none, detail: `new run ${c.newExecutionRunId ?? ''}`.trim() };
  }
  if (a.workflowExecutionUpdateAcceptedEventAttributes) {
    return {
      ...none,
      detail: `update ${a.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.input?.name ?? ''}`,
    };
  }
  if (a.workflowTaskScheduledEventAttributes)
    return { ...none, attempt: a.workflowTaskScheduledEventAttributes.attempt ?? null };
  if (a.workflowTaskFailedEventAttributes)
    return { ...none, failure: failureMessage(a.workflowTaskFailedEventAttributes.failure) };
  return undefined;
}

function describeActivityEvent(a: HistoryEvent, activities: ActivityNames): EventDescription | undefined {
  const none = NO_DETAIL;
  const activity = (scheduledEventId: unknown) =>
    activities.get(toNumber(scheduledEventId)) ?? { name: '', attempt: null };
  if (a.activityTaskScheduledEventAttributes)
    return { ...none, detail: a.activityTaskScheduledEventAttributes.activityType?.name ?? '' };
  if (a.activityTaskStartedEventAttributes) {
    const s = a.activityTaskStartedEventAttributes;
    const act = activity(s.scheduledEventId);
    act.attempt = s.attempt ?? null;
    // The failure of the attempt before this one, if it was retried.
    return { detail: act.name, attempt: act.attempt, failure: s.lastFailure ? failureMessage(s.lastFailure) : null };
  }
  if (a.activityTaskCompletedEventAttributes) {
    const act = activity(a.activityTaskCompletedEventAttributes.scheduledEventId);
    return { ...none, detail: act.name, attempt: act.attempt };
  }
  if (a.activityTaskFailedEventAttributes) {
    const f = a.activityTaskFailedEventAttributes;
    const act = activity(f.scheduledEventId);
    return { detail: act.name, attempt: act.attempt, failure: failureMessage(f.failure) };
  }
  if (a.activityTaskTimedOutEventAttributes) {
    const f = a.activityTaskTimedOutEventAttributes;
    const act = activity(f.scheduledEventId);
    return { detail: act.name, attempt: act.attempt, failure: failureMessage(f.failure) };
  }
  if (a.activityTaskCancelRequestedEventAttributes)
    return { ...none, detail: activity(a.activityTaskCancelRequestedEventAttributes.scheduledEventId).name };
  if (a.activityTaskCanceledEventAttributes)
    return { ...none, detail: activity(a.activityTaskCanceledEventAttributes.scheduledEventId).name };
  return undefined;
}

/** Timers, markers, signals to other workflows and child workflows. */
function describeOtherEvent(a: HistoryEvent): EventDescription | undefined {
  const none = NO_DETAIL;
  if (a.timerStartedEventAttributes) {
    const t = a.timerStartedEventAttributes;
    return { ...none, detail: `timer ${t.timerId ?? ''} (${formatDuration(t.startToFireTimeout)})` };
  }
  if (a.timerFiredEventAttributes) return { ...none, detail: `timer ${a.timerFiredEventAttributes.timerId ?? ''}` };
  if (a.timerCanceledEventAttributes)
    return { ...none, detail: `timer ${a.timerCanceledEventAttributes.timerId ?? ''}` };
  if (a.markerRecordedEventAttributes) {
    const m = a.markerRecordedEventAttributes;
    return { ...none, detail: m.markerName ?? '', failure: m.failure ? failureMessage(m.failure) : null };
  }
  if (a.signalExternalWorkflowExecutionInitiatedEventAttributes) {
    const s = a.signalExternalWorkflowExecutionInitiatedEventAttributes;
    return { ...none, detail: `signal ${s.signalName ?? ''} → ${s.workflowExecution?.workflowId ?? ''}` };
  }
  if (a.startChildWorkflowExecutionInitiatedEventAttributes) {
    const c = a.startChildWorkflowExecutionInitiatedEventAttributes;
    return { ...none, detail: `${c.workflowType?.name ?? ''} ${c.workflowId ?? ''}`.trim() };
  }
  if (a.childWorkflowExecutionFailedEventAttributes) {
    const c = a.childWorkflowExecutionFailedEventAttributes;
    return { ...none, detail: c.workflowExecution?.workflowId ?? '', failure: failureMessage(c.failure) };
  }
  return undefined;
}

/** A failure's message with its causes: `activity StartToClose timeout: connect ECONNREFUSED`. */
function failureMessage(f: Failure | null | undefined): string | null {
  const parts: string[] = [];
  for (let cur = f; cur && parts.length < 5; cur = cur.cause) if (cur.message) parts.push(cur.message);
  // One line per event: a multi-line message would break the table.
  return parts.length > 0 ? parts.join(': ').replace(/\s*\n\s*/g, ' ') : null;
}

/** `EVENT_TYPE_ACTIVITY_TASK_SCHEDULED` → `ActivityTaskScheduled`. */
function eventTypeName(type: proto.temporal.api.enums.v1.EventType | null | undefined): string {
  const name = temporal.api.enums.v1.EventType[type ?? 0] ?? `EVENT_TYPE_${String(type)}`;
  return name
    .replace(/^EVENT_TYPE_/, '')
    .toLowerCase()
    .replace(/(^|_)([a-z])/g, (_m: string, _s: string, c: string) => c.toUpperCase());
}

/** A protobuf Duration as `1d2h3m4s` (`250ms` below a second). */
function formatDuration(d: { seconds?: unknown; nanos?: number | null } | null | undefined): string {
  if (!d) return '';
  const total = toNumber(d.seconds);
  if (total === 0) return `${Math.round((d.nanos ?? 0) / 1e6)}ms`;
  const units: [string, number][] = [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ];
  let rest = total;
  let out = '';
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) out += `${n}${unit}`;
  }
  return out;
}

/** int64 fields arrive as Long (or number, or string from JSON). */
function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return Number(v);
  if (v && typeof v === 'object' && 'toNumber' in v && typeof v.toNumber === 'function')
    return Number((v.toNumber as () => number).call(v));
  return 0;
}

const INVALID_ARGUMENT = 3;
const NOT_FOUND = 5;

/** The gRPC status code of a Temporal client error (the SDK wraps it as the `cause`). */
function grpcCode(err: unknown): number | undefined {
  for (let cur: unknown = err; cur && typeof cur === 'object'; cur = (cur as { cause?: unknown }).cause) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

/** The server's own words for a refused call (the SDK's message only says which call failed). */
export function grpcDetails(err: unknown): string {
  for (let cur: unknown = err; cur && typeof cur === 'object'; cur = (cur as { cause?: unknown }).cause) {
    const details = (cur as { details?: unknown }).details;
    // grpc-message arrives percent-encoded from some servers (`field%3A MerchantId`).
    if (typeof details === 'string' && details) return safeDecode(details);
  }
  return errorMessage(err);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
