/**
 * Workflow updates of one run, following the real server's update protocol:
 *
 * - `UpdateWorkflowExecution` *admits* an update (in memory only, like the real server's update
 *   registry: an admitted update is not in history and a client retries it after a restart).
 * - The next workflow task to start carries every admitted update as a protocol message
 *   (`<updateId>/request`, `protocol_instance_id` = update id, `sequencing_id.event_id` = the
 *   task's WorkflowTaskScheduled id, body = `temporal.api.update.v1.Request`).
 * - The worker answers in `RespondWorkflowTaskCompleted.messages`: an `Acceptance` and later a
 *   `Response` each come with a `ProtocolMessage` command that fixes their place among the
 *   command events, and become `WorkflowExecutionUpdateAccepted` / `...Completed` events. A
 *   `Rejection` (validator failed) has no command and leaves no trace in history; its failure is
 *   the update's outcome.
 * - An update still admitted when the run closes fails with NOT_FOUND "workflow execution already
 *   completed"; an accepted one gets the failure `AcceptedUpdateCompletedWorkflow` (both as the
 *   real and Java servers answer).
 *
 * Accepted and completed updates are derivable from their history events; this class only
 * builds those events — the run appends them through its one append path.
 */
import { RpcError, status } from './errors';
import { EventType, long, temporal, toNum, type HistoryEvent } from './proto';

type Request = temporal.api.update.v1.IRequest;
type Outcome = temporal.api.update.v1.IOutcome;
type ProtocolMessage = temporal.api.protocol.v1.IMessage;
type Command = temporal.api.command.v1.ICommand;

export const UpdateStage = temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage;
const CommandType = temporal.api.enums.v1.CommandType;

const REQUEST_TYPE = 'type.googleapis.com/temporal.api.update.v1.Request';

export interface Update {
  id: string;
  request: Request;
  state: 'admitted' | 'delivered' | 'accepted' | 'completed';
  /** Sequencing event id of the request message as last handed to a worker. */
  sequencingEventId: number;
  acceptedEventId: number;
  outcome?: Outcome;
  /** Set when the update can never be accepted (run closed first). */
  error?: RpcError;
}

/** What a worker message changes: an event to append (then `commit` with its id), or nothing. */
export interface UpdateEffect {
  event: HistoryEvent | null;
  commit(eventId: number): void;
}

function bodyKind(msg: ProtocolMessage): 'acceptance' | 'rejection' | 'response' | undefined {
  const url = msg.body?.type_url ?? '';
  if (url.endsWith('/temporal.api.update.v1.Acceptance')) return 'acceptance';
  if (url.endsWith('/temporal.api.update.v1.Rejection')) return 'rejection';
  if (url.endsWith('/temporal.api.update.v1.Response')) return 'response';
  return undefined;
}

export function workflowCompletedError(): RpcError {
  return new RpcError(status.NOT_FOUND, 'workflow execution already completed');
}

export class UpdateRegistry {
  private readonly byId = new Map<string, Update>();
  /** Waiters of `wait`; made on first use (most runs never see an update, and every run is kept). */
  private listeners: Set<() => void> | undefined;

  get isEmpty(): boolean {
    return this.byId.size === 0;
  }

  get(id: string): Update | undefined {
    return this.byId.get(id);
  }

  /** Admit a new update (the caller checked for an existing one with the same id). */
  admit(request: Request): Update {
    const id = request.meta?.updateId ?? '';
    const u: Update = { id, request, state: 'admitted', sequencingEventId: 0, acceptedEventId: 0 };
    this.byId.set(id, u);
    this.changed();
    return u;
  }

  /** Admitted updates that no worker has seen yet (they need a workflow task). */
  hasUndelivered(): boolean {
    for (const u of this.byId.values()) if (u.state === 'admitted') return true;
    return false;
  }

  /** Request messages for a workflow task starting now; they become "delivered". */
  deliver(sequencingEventId: number): ProtocolMessage[] {
    const out: ProtocolMessage[] = [];
    for (const u of this.byId.values()) {
      if (u.state !== 'admitted') continue;
      u.state = 'delivered';
      u.sequencingEventId = sequencingEventId;
      out.push({
        id: `${u.id}/request`,
        protocolInstanceId: u.id,
        eventId: long(sequencingEventId),
        body: { type_url: REQUEST_TYPE, value: temporal.api.update.v1.Request.encode(u.request).finish() },
      });
    }
    return out;
  }

  /** The task that carried them failed or timed out: hand them to the next one. */
  undeliver(): void {
    for (const u of this.byId.values()) if (u.state === 'delivered') u.state = 'admitted';
  }

  /**
   * Checks a completion's messages before anything is written: every ProtocolMessage command
   * names a message of the completion, and every message names an update in a state that allows
   * it. Throws INVALID_ARGUMENT otherwise.
   */
  validate(commands: Command[], messages: ProtocolMessage[]): void {
    const ids = new Set(messages.map((m) => m.id ?? ''));
    for (const c of commands) {
      if (c.commandType !== CommandType.COMMAND_TYPE_PROTOCOL_MESSAGE) continue;
      const mid = c.protocolMessageCommandAttributes?.messageId ?? '';
      if (!ids.has(mid))
        throw new RpcError(status.INVALID_ARGUMENT, `ProtocolMessage command names unknown message ${mid}`);
    }
    const accepting = new Set<string>();
    for (const m of messages) {
      const kind = bodyKind(m);
      const u = this.byId.get(m.protocolInstanceId ?? '');
      if (!kind)
        throw new RpcError(status.INVALID_ARGUMENT, `Unsupported protocol message body ${m.body?.type_url ?? ''}`);
      if (!u) throw new RpcError(status.INVALID_ARGUMENT, `No update with id ${m.protocolInstanceId ?? ''}`);
      if (kind === 'acceptance' || kind === 'rejection') {
        if (u.state !== 'delivered')
          throw new RpcError(status.INVALID_ARGUMENT, `Update ${u.id} is not awaiting acceptance`);
        if (kind === 'acceptance') accepting.add(u.id);
      } else if (u.state !== 'accepted' && !accepting.has(u.id)) {
        throw new RpcError(status.INVALID_ARGUMENT, `Update ${u.id} was not accepted`);
      }
    }
  }

  /** Applies one (validated) worker message. */
  apply(msg: ProtocolMessage, identity: string): UpdateEffect {
    const u = this.byId.get(msg.protocolInstanceId ?? '');
    const kind = bodyKind(msg);
    const value = msg.body?.value ?? new Uint8Array();
    const none: UpdateEffect = { event: null, commit: () => {} };
    if (!u) return none;
    if (kind === 'acceptance') {
      const a = temporal.api.update.v1.Acceptance.decode(value);
      const seq = toNum(a.acceptedRequestSequencingEventId) || u.sequencingEventId;
      return {
        event: {
          eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
          workflowExecutionUpdateAcceptedEventAttributes: {
            protocolInstanceId: u.id,
            acceptedRequestMessageId: a.acceptedRequestMessageId || `${u.id}/request`,
            acceptedRequestSequencingEventId: long(seq),
            // Core rebuilds the handler's input from this on replay: always the full request.
            acceptedRequest: u.request,
          },
        },
        commit: (eventId) => {
          u.state = 'accepted';
          u.acceptedEventId = eventId;
          this.changed();
        },
      };
    }
    if (kind === 'rejection') {
      const r = temporal.api.update.v1.Rejection.decode(value);
      u.state = 'completed';
      u.outcome = { failure: r.failure ?? { message: 'update rejected' } };
      // The real server forgets a rejected update: the same id may be sent again.
      this.byId.delete(u.id);
      this.changed();
      return none;
    }
    const resp = temporal.api.update.v1.Response.decode(value);
    return {
      event: {
        eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
        workflowExecutionUpdateCompletedEventAttributes: {
          meta: resp.meta ?? { updateId: u.id, identity },
          acceptedEventId: long(u.acceptedEventId),
          outcome: resp.outcome,
        },
      },
      commit: () => {
        u.state = 'completed';
        u.outcome = resp.outcome ?? {};
        this.changed();
      },
    };
  }

  /** Durable restart: accepted and completed updates come back from their history events. */
  restore(events: HistoryEvent[]): void {
    for (const e of events) {
      const acc = e.workflowExecutionUpdateAcceptedEventAttributes;
      if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED && acc) {
        const id = acc.protocolInstanceId ?? '';
        const seq = toNum(acc.acceptedRequestSequencingEventId);
        this.byId.set(id, {
          id,
          request: acc.acceptedRequest ?? {},
          state: 'accepted',
          sequencingEventId: seq,
          acceptedEventId: toNum(e.eventId),
        });
      }
      const done = e.workflowExecutionUpdateCompletedEventAttributes;
      if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED && done) {
        const u = this.byId.get(done.meta?.updateId ?? '');
        if (u) {
          u.state = 'completed';
          u.outcome = done.outcome ?? {};
        }
      }
    }
  }

  /** After a completion: requests the worker did not answer go out again with the next task. */
  afterCompletion(): void {
    this.undeliver();
  }

  /** The run closed: nothing can be accepted or completed any more. */
  abort(): void {
    for (const u of this.byId.values()) {
      if (u.state === 'admitted' || u.state === 'delivered') {
        u.error = workflowCompletedError();
        this.byId.delete(u.id);
      } else if (u.state === 'accepted') {
        u.state = 'completed';
        u.outcome = {
          failure: {
            message: 'Workflow Update failed because the Workflow completed before the Update completed.',
            source: 'Server',
            applicationFailureInfo: { type: 'AcceptedUpdateCompletedWorkflow', nonRetryable: true },
          },
        };
      }
    }
    this.changed();
  }

  /** Lifecycle stage as the API names it (a rejection is COMPLETED with a failure outcome). */
  static stage(u: Update): number {
    if (u.state === 'completed') return UpdateStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED;
    if (u.state === 'accepted') return UpdateStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED;
    return UpdateStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED;
  }

  /** Resolves once `u` reached `stage`, failed for good, or `timeoutMs` of wall time passed. */
  wait(u: Update, stage: number, timeoutMs: number, onCancel: (cb: () => void) => void): Promise<void> {
    const done = (): boolean => u.error !== undefined || UpdateRegistry.stage(u) >= stage;
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const listeners = (this.listeners ??= new Set());
      const finish = (): void => {
        clearTimeout(timer);
        listeners.delete(check);
        resolve();
      };
      const check = (): void => {
        if (done()) finish();
      };
      const timer = setTimeout(finish, timeoutMs);
      listeners.add(check);
      onCancel(finish);
    });
  }

  private changed(): void {
    if (!this.listeners || this.listeners.size === 0) return;
    for (const l of [...this.listeners]) l();
  }
}
