/**
 * Workflow interceptors for tracing (docs/operations.md "Tracing"); not a workflow. Bundled into
 * the one workflow bundle always (src/temporal/workflow-interceptor-modules.ts), and a no-op for a
 * run whose start and signals carry no trace context, so an untraced deployment pays nothing but
 * a header lookup per call.
 *
 * A traced run delegates to the OpenTelemetry interceptors of @temporalio/interceptors-opentelemetry
 * (a span per run, signal and activity start; the context handed to each activity in its headers).
 * One rule is ours: an activity scheduled after a traced signal belongs to that signal's trace, not
 * to the run's. The charge workflow is started by POST /v1/charges but pays because the acquirer's
 * callback signalled it: `recordPayment`, and what follows from it (the `charge.paid` delivery),
 * belongs to the callback's trace (a child of its HandleSignal span). Signals and their headers are
 * in the history, so this choice replays identically.
 */
import * as otel from '@opentelemetry/api';
import type {
  ActivityInput,
  LocalActivityInput,
  Next,
  SignalInput,
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
  WorkflowOutboundCallsInterceptor,
  Headers,
} from '@temporalio/workflow';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';

const traced = (headers: Headers): boolean => headers[TRACE_HEADER] !== undefined;

export const interceptors = (): WorkflowInterceptors => {
  let inbound: OpenTelemetryInboundInterceptor | undefined;
  let outbound: OpenTelemetryOutboundInterceptor | undefined;
  /** The run was started with a trace context. */
  let runTraced = false;
  /** Context of the last traced signal's span: the cause of what the workflow schedules next. */
  let cause: otel.Context | undefined;
  const otelInbound = (): OpenTelemetryInboundInterceptor => (inbound ??= new OpenTelemetryInboundInterceptor());
  const otelOutbound = (): OpenTelemetryOutboundInterceptor => (outbound ??= new OpenTelemetryOutboundInterceptor());

  /** Schedules under the cause's context when a traced signal came, under the run's when traced, else untouched. */
  function schedule(
    call: (o: OpenTelemetryOutboundInterceptor) => Promise<unknown>,
    next: () => Promise<unknown>,
  ): Promise<unknown> {
    if (cause) {
      const o = otelOutbound();
      return otel.context.with(cause, () => call(o));
    }
    return runTraced ? call(otelOutbound()) : next();
  }

  const inboundInterceptor: WorkflowInboundCallsInterceptor = {
    execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>) {
      if (!traced(input.headers)) return next(input);
      runTraced = true;
      return otelInbound().execute(input, next);
    },
    handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>) {
      if (!traced(input.headers)) return next(input);
      return otelInbound().handleSignal(input, (i) => {
        // Inside the HandleSignal span: what the signal causes is its child.
        cause = otel.context.active();
        return next(i);
      });
    },
  };
  const outboundInterceptor: WorkflowOutboundCallsInterceptor = {
    scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
      return schedule(
        (o) => o.scheduleActivity(input, next),
        () => next(input),
      );
    },
    scheduleLocalActivity(
      input: LocalActivityInput,
      next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>,
    ) {
      return schedule(
        (o) => o.scheduleLocalActivity(input, next),
        () => next(input),
      );
    },
  };
  return {
    inbound: [inboundInterceptor],
    outbound: [outboundInterceptor],
    internals: [new OpenTelemetryInternalsInterceptor()],
  };
};
