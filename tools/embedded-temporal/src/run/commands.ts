/**
 * A completed workflow task's commands turned into history events, one per command, in command
 * order, right after WorkflowTaskCompleted (temporal-history-contract.md §0). Activities,
 * children and external workflows are handed to their own modules; timers live here.
 */
import type { TimerHandle } from '../clock';
import { invalidArgument } from '../errors';
import { CommandType, durationMs, EventType, long, toNum, WorkflowExecutionStatus, temporal } from '../proto';
import type { Execution } from '../execution';

type Command = temporal.api.command.v1.ICommand;

export const closingCommands = new Set<number>([
  CommandType.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_FAIL_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_CANCEL_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_CONTINUE_AS_NEW_WORKFLOW_EXECUTION,
]);

const supportedCommands = new Set<number>([
  CommandType.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK,
  CommandType.COMMAND_TYPE_REQUEST_CANCEL_ACTIVITY_TASK,
  CommandType.COMMAND_TYPE_START_TIMER,
  CommandType.COMMAND_TYPE_CANCEL_TIMER,
  CommandType.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_FAIL_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_CANCEL_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_CONTINUE_AS_NEW_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_RECORD_MARKER,
  CommandType.COMMAND_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
  CommandType.COMMAND_TYPE_MODIFY_WORKFLOW_PROPERTIES,
  CommandType.COMMAND_TYPE_START_CHILD_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION,
  CommandType.COMMAND_TYPE_PROTOCOL_MESSAGE,
]);

export class Commands {
  /** Running timers by timer id. */
  private timers = new Map<string, { startedEventId: number; handle: TimerHandle; fireAt: number }>();

  constructor(private readonly run: Execution) {}

  /** Rejects the whole task before any change is made. */
  validate(commands: Command[]): void {
    commands.forEach((c, i) => {
      const t = c.commandType ?? 0;
      if (closingCommands.has(t) && i !== commands.length - 1) {
        throw invalidArgument('A workflow-closing command must be the last command of a workflow task');
      }
      if (!supportedCommands.has(t)) {
        const name = CommandType[t] ?? String(t);
        throw invalidArgument(`Command ${name} is not supported by the pixflow test server`);
      }
    });
  }

  apply(cmd: Command, wftCompletedId: number, identity: string): void {
    const run = this.run;
    const wfc = long(wftCompletedId);
    switch (cmd.commandType) {
      case CommandType.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK:
        run.acts.schedule(cmd.scheduleActivityTaskCommandAttributes ?? {}, wftCompletedId);
        return;
      case CommandType.COMMAND_TYPE_REQUEST_CANCEL_ACTIVITY_TASK:
        return run.acts.requestCancel(
          toNum(cmd.requestCancelActivityTaskCommandAttributes?.scheduledEventId),
          wftCompletedId,
        );
      case CommandType.COMMAND_TYPE_START_TIMER: {
        const a = cmd.startTimerCommandAttributes ?? {};
        const timerId = a.timerId ?? '';
        const ev = run.append({
          eventType: EventType.EVENT_TYPE_TIMER_STARTED,
          timerStartedEventAttributes: {
            timerId,
            startToFireTimeout: a.startToFireTimeout,
            workflowTaskCompletedEventId: wfc,
          },
        });
        this.armTimer(timerId, toNum(ev.eventId), run.store.clock.now() + durationMs(a.startToFireTimeout));
        return;
      }
      case CommandType.COMMAND_TYPE_CANCEL_TIMER: {
        const timerId = cmd.cancelTimerCommandAttributes?.timerId ?? '';
        let startedEventId: number;
        const t = this.timers.get(timerId);
        if (t) {
          t.handle.cancel();
          this.timers.delete(timerId);
          startedEventId = t.startedEventId;
        } else {
          // Already fired but the fire is still buffered: drop it, never write Fired and Canceled.
          run.log.dropTimerFire(timerId);
          startedEventId = this.findTimerStartedId(timerId);
        }
        run.append({
          eventType: EventType.EVENT_TYPE_TIMER_CANCELED,
          timerCanceledEventAttributes: {
            timerId,
            startedEventId: long(startedEventId),
            workflowTaskCompletedEventId: wfc,
            identity,
          },
        });
        return;
      }
      case CommandType.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION: {
        const result = cmd.completeWorkflowExecutionCommandAttributes?.result;
        run.append({
          eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
          workflowExecutionCompletedEventAttributes: { result, workflowTaskCompletedEventId: wfc },
        });
        return run.close(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED);
      }
      case CommandType.COMMAND_TYPE_FAIL_WORKFLOW_EXECUTION:
        return run.failWorkflow(cmd.failWorkflowExecutionCommandAttributes?.failure ?? null, wftCompletedId);
      case CommandType.COMMAND_TYPE_CANCEL_WORKFLOW_EXECUTION:
        run.append({
          eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
          workflowExecutionCanceledEventAttributes: {
            details: cmd.cancelWorkflowExecutionCommandAttributes?.details,
            workflowTaskCompletedEventId: wfc,
          },
        });
        return run.close(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_CANCELED);
      case CommandType.COMMAND_TYPE_CONTINUE_AS_NEW_WORKFLOW_EXECUTION:
        return run.continueAsNew(cmd.continueAsNewWorkflowExecutionCommandAttributes ?? {}, wftCompletedId);
      case CommandType.COMMAND_TYPE_RECORD_MARKER: {
        const a = cmd.recordMarkerCommandAttributes ?? {};
        run.append({
          eventType: EventType.EVENT_TYPE_MARKER_RECORDED,
          markerRecordedEventAttributes: {
            markerName: a.markerName,
            details: a.details,
            header: a.header,
            failure: a.failure,
            workflowTaskCompletedEventId: wfc,
          },
        });
        return;
      }
      case CommandType.COMMAND_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: {
        const sa = cmd.upsertWorkflowSearchAttributesCommandAttributes?.searchAttributes ?? {};
        run.searchAttributes = {
          indexedFields: { ...(run.searchAttributes.indexedFields ?? {}), ...(sa.indexedFields ?? {}) },
        };
        run.store.visibility.put(run);
        run.append({
          eventType: EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
          upsertWorkflowSearchAttributesEventAttributes: { searchAttributes: sa, workflowTaskCompletedEventId: wfc },
        });
        return;
      }
      case CommandType.COMMAND_TYPE_MODIFY_WORKFLOW_PROPERTIES: {
        const memo = cmd.modifyWorkflowPropertiesCommandAttributes?.upsertedMemo ?? {};
        run.memo = { fields: { ...(run.memo.fields ?? {}), ...(memo.fields ?? {}) } };
        run.append({
          eventType: EventType.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED,
          workflowPropertiesModifiedEventAttributes: { upsertedMemo: memo, workflowTaskCompletedEventId: wfc },
        });
        return;
      }
      case CommandType.COMMAND_TYPE_START_CHILD_WORKFLOW_EXECUTION:
        return run.kids.startChild(cmd.startChildWorkflowExecutionCommandAttributes ?? {}, wftCompletedId);
      case CommandType.COMMAND_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION:
        return run.kids.signalExternal(cmd.signalExternalWorkflowExecutionCommandAttributes ?? {}, wftCompletedId);
      case CommandType.COMMAND_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION:
        return run.kids.cancelExternal(
          cmd.requestCancelExternalWorkflowExecutionCommandAttributes ?? {},
          wftCompletedId,
        );
      default:
        // validate() rejected everything else before any change was made.
        return;
    }
  }

  /** Also used at restart to re-arm a timer at its original time. */
  armTimer(timerId: string, startedEventId: number, fireAt: number): void {
    const run = this.run;
    const handle = run.store.clock.scheduleAt(fireAt, () => {
      this.timers.delete(timerId);
      run.external(() => {
        run.append({
          eventType: EventType.EVENT_TYPE_TIMER_FIRED,
          timerFiredEventAttributes: { timerId, startedEventId: long(startedEventId) },
        });
      }, timerId);
    });
    this.timers.set(timerId, { startedEventId, handle, fireAt });
  }

  /** When the next running timer fires; Infinity = none (a parked run wakes then). */
  nextFireAt(): number {
    let at = Infinity;
    for (const t of this.timers.values()) if (t.fireAt < at) at = t.fireAt;
    return at;
  }

  /** The run closed (or was parked): no timer fires any more. */
  cancelTimers(): void {
    for (const t of this.timers.values()) t.handle.cancel();
    this.timers.clear();
  }

  private findTimerStartedId(timerId: string): number {
    const history = this.run.history;
    for (let i = history.length - 1; i >= 0; i--) {
      const e = history[i];
      if (e.eventType === EventType.EVENT_TYPE_TIMER_STARTED && e.timerStartedEventAttributes?.timerId === timerId) {
        return toNum(e.eventId);
      }
    }
    return 0;
  }
}
