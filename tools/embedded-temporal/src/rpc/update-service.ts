/**
 * WorkflowService methods for workflow updates: UpdateWorkflowExecution,
 * PollWorkflowExecutionUpdate and ExecuteMultiOperation (update-with-start). The protocol itself
 * lives in src/updates.ts and Execution; these handlers validate, admit and wait.
 */
import { invalidArgument, notFound } from '../errors';
import type { Execution } from '../execution';
import { temporal } from '../proto';
import type { StartOptions, Store } from '../store';
import { UpdateRegistry, UpdateStage, type Update } from '../updates';
import { handler, type CallContext, type Handler } from './grpc';

import ws = temporal.api.workflowservice.v1;

/** How long one call waits for the requested stage before answering with the stage reached. */
const UPDATE_WAIT_MS = 60_000;

function waitMs(ctx: CallContext): number {
  return Math.max(0, Math.min(UPDATE_WAIT_MS, ctx.remainingMs() - 500));
}

function response(run: Execution, u: Update): ws.IUpdateWorkflowExecutionResponse {
  const stage = UpdateRegistry.stage(u);
  return {
    updateRef: { workflowExecution: run.execution, updateId: u.id },
    outcome: stage === UpdateStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED ? u.outcome : null,
    stage,
  };
}

function checkUpdateRequest(req: ws.IUpdateWorkflowExecutionRequest): number {
  const stage = req.waitPolicy?.lifecycleStage ?? 0;
  if (!stage) throw invalidArgument('LifeCycle stage is required');
  if (stage === UpdateStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED) {
    throw invalidArgument('Waiting for the ADMITTED stage is not supported');
  }
  if (!req.request?.meta?.updateId) throw invalidArgument('Update id is not set on request');
  if (!req.request.input?.name) throw invalidArgument('Update name is not set on request');
  return stage;
}

export function updateService(
  store: Store,
  startOptions: (req: ws.IStartWorkflowExecutionRequest) => StartOptions,
): Record<string, Handler> {
  /** Admit (or find) the update on `run` and wait for the stage asked for. */
  const admitAndWait = async (
    run: Execution,
    req: ws.IUpdateWorkflowExecutionRequest,
    stage: number,
    ctx: CallContext,
  ): Promise<ws.IUpdateWorkflowExecutionResponse> => {
    const u = run.admitUpdate(req.request ?? {});
    await run.updates.wait(u, stage, waitMs(ctx), ctx.onCancel);
    if (u.error) throw u.error;
    return response(run, u);
  };

  return {
    UpdateWorkflowExecution: handler<ws.IUpdateWorkflowExecutionRequest>(async (req, ctx) => {
      store.requireNamespace(req.namespace);
      const stage = checkUpdateRequest(req);
      const run = store.getRun(req.namespace ?? '', req.workflowExecution);
      if (req.firstExecutionRunId && run.p.firstExecutionRunId !== req.firstExecutionRunId) {
        throw notFound('workflow execution not found for the given first execution run id');
      }
      return admitAndWait(run, req, stage, ctx);
    }),

    PollWorkflowExecutionUpdate: handler<ws.IPollWorkflowExecutionUpdateRequest>(async (req, ctx) => {
      store.requireNamespace(req.namespace);
      const ref = req.updateRef;
      const updateId = ref?.updateId;
      if (!updateId) throw invalidArgument('Update id is not set on request');
      const run = store.getRun(req.namespace ?? '', ref?.workflowExecution);
      const u = run.updates.get(updateId);
      if (!u) {
        if (!run.isOpen) throw notFound('workflow execution already completed');
        throw notFound(`update ${updateId} not found`);
      }
      const stage = req.waitPolicy?.lifecycleStage ?? 0;
      if (stage > UpdateStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED) {
        await run.updates.wait(u, stage, waitMs(ctx), ctx.onCancel);
      }
      if (u.error) throw u.error;
      return response(run, u);
    }),

    /**
     * Update-with-start: operations = [startWorkflow, updateWorkflow] on one workflow id. The
     * start follows its id-conflict policy (USE_EXISTING updates the running workflow); a new run
     * gets the update in its first workflow task.
     */
    ExecuteMultiOperation: handler<ws.IExecuteMultiOperationRequest>(async (req, ctx) => {
      store.requireNamespace(req.namespace);
      const ops = req.operations ?? [];
      const start = ops[0]?.startWorkflow;
      const update = ops[1]?.updateWorkflow;
      if (ops.length !== 2 || !start || !update) {
        throw invalidArgument(
          'Only update-with-start is supported: operations must be [startWorkflow, updateWorkflow]',
        );
      }
      if (
        (start.namespace || req.namespace) !== req.namespace ||
        (update.namespace || req.namespace) !== req.namespace
      ) {
        throw invalidArgument('Operations must use the namespace of the request');
      }
      if (update.workflowExecution?.workflowId && update.workflowExecution.workflowId !== start.workflowId) {
        throw invalidArgument('The update must target the workflow id of the start operation');
      }
      if (update.workflowExecution?.runId || update.firstExecutionRunId) {
        throw invalidArgument('The update of update-with-start cannot name a run');
      }
      if (start.cronSchedule) throw invalidArgument('Update-with-start cannot use a cron schedule');
      if (start.requestEagerExecution) throw invalidArgument('Update-with-start cannot request eager execution');
      const stage = checkUpdateRequest(update);
      const opts = startOptions({ ...start, namespace: req.namespace });
      const existing = store.findRun(opts.params.namespace, opts.params.workflowId, '');
      // A retried request finds its update already admitted on the run it started.
      const { run, started } =
        existing?.isOpen && existing.updates.get(update.request?.meta?.updateId ?? '')
          ? { run: existing, started: existing.p.requestId === opts.params.requestId }
          : store.startWorkflow(opts);
      const updateResp = await admitAndWait(run, update, stage, ctx);
      return {
        responses: [{ startWorkflow: { runId: run.runId, started } }, { updateWorkflow: updateResp }],
      };
    }),
  };
}
