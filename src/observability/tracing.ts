/**
 * OpenTelemetry tracing (docs/operations.md "Tracing"): off by default, on when TRACING=otlp (or
 * OTEL_EXPORTER_OTLP_ENDPOINT is set). One module owns the process's tracer provider, so the rest of
 * the code asks only "is a trace going on, and what is its id?":
 *
 * - `installTracing` registers the global provider, the W3C trace-context propagator, the
 *   AsyncLocalStorage context manager and the undici instrumentation (the acquirer client and the
 *   simulator's callbacks use undici or fetch, which publish on diagnostics_channel: no require
 *   hook needed, so it works under tsx as compiled).
 * - Temporal: the client interceptor puts the caller's context in the headers of every start and
 *   signal; the worker's activity interceptor and the workflow interceptors (workflows/tracing.ts,
 *   in the one workflow bundle) continue it. Workflow spans leave the sandbox through the
 *   `exporter` sink into this provider's span processor.
 * - The outbox (webhook deliveries) and the callback inbox are where the call chain breaks: their
 *   rows keep the W3C `traceparent` of the work that wrote them (`currentTraceparent`), and the
 *   code that picks them up later continues that trace (`withTraceparent`).
 *
 * When tracing is off nothing is registered: the OpenTelemetry API answers with its no-op
 * implementations, `tracingActive()` is false and every helper here returns at once.
 */
import {
  context,
  propagation,
  trace,
  SpanKind,
  SpanStatusCode,
  isSpanContextValid,
  type Attributes,
  type Span,
} from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ClientInterceptors } from '@temporalio/client';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';

const TRACER_NAME = 'pixflow';

export interface TracingSettings {
  TRACING: 'off' | 'otlp';
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_SERVICE_NAME: string;
}

export interface InstalledTracing {
  processor: SpanProcessor;
  resource: Resource;
  clientInterceptors(): ClientInterceptors;
  activityInterceptor: ActivityInterceptorsFactory;
  sinks: InjectedSinks<OpenTelemetrySinks>;
  /** Exports what is buffered (a process about to stop calls it). */
  flush(): Promise<void>;
  /** Flushes, then unregisters everything `installTracing` registered. */
  shutdown(): Promise<void>;
}

let installed: InstalledTracing | undefined;

/** True while a provider of ours is registered. */
export function tracingActive(): boolean {
  return installed !== undefined;
}

/**
 * Registers the global provider over `processor` (a test passes an in-memory exporter's
 * SimpleSpanProcessor; `tracingFromConfig` a batch processor over OTLP). Once per process. The
 * SDK is loaded here, not at start-up: a process with tracing off never loads it.
 */
export async function installTracing(opts: {
  serviceName: string;
  processor: SpanProcessor;
}): Promise<InstalledTracing> {
  if (installed) throw new Error('tracing is already installed in this process');
  const [
    { AsyncLocalStorageContextManager },
    { W3CTraceContextPropagator },
    { Resource },
    sdk,
    undiciModule,
    semconv,
    temporal,
  ] = await Promise.all([
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/instrumentation-undici'),
    import('@opentelemetry/semantic-conventions'),
    import('@temporalio/interceptors-opentelemetry'),
  ]);
  if (installed) throw new Error('tracing is already installed in this process');
  const resource = new Resource({ [semconv.ATTR_SERVICE_NAME]: opts.serviceName });
  const provider = new sdk.BasicTracerProvider({ resource, spanProcessors: [opts.processor] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  provider.register({ contextManager, propagator: new W3CTraceContextPropagator() });
  const undici = new undiciModule.UndiciInstrumentation();
  undici.setTracerProvider(provider);
  undici.enable();
  const self: InstalledTracing = {
    processor: opts.processor,
    resource,
    clientInterceptors: () => ({ workflow: [new temporal.OpenTelemetryWorkflowClientInterceptor()] }),
    activityInterceptor: (ctx) => ({ inbound: new temporal.OpenTelemetryActivityInboundInterceptor(ctx) }),
    sinks: { exporter: temporal.makeWorkflowExporter(opts.processor, resource) },
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      if (installed !== self) return;
      installed = undefined;
      undici.disable();
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
  installed = self;
  return self;
}

/** The process's tracing as configured: nothing when off; an OTLP/HTTP batch exporter when on. */
export async function tracingFromConfig(
  settings: TracingSettings,
  exporter?: SpanExporter,
): Promise<InstalledTracing | undefined> {
  if (settings.TRACING === 'off') return undefined;
  if (installed) return installed;
  const base = settings.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318';
  const [{ BatchSpanProcessor }, { OTLPTraceExporter }] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  const otlp = exporter ?? new OTLPTraceExporter({ url: `${base.replace(/\/+$/, '')}/v1/traces` });
  return (
    installed ?? installTracing({ serviceName: settings.OTEL_SERVICE_NAME, processor: new BatchSpanProcessor(otlp) })
  );
}

/** Flushes the installed provider, if any (before a process stops). */
export async function flushTracing(): Promise<void> {
  await installed?.flush();
}

/** The trace and span ids of the active span, for log lines (src/lib/logger.ts). */
export function activeTraceIds(): { traceId: string; spanId: string } | undefined {
  if (!installed) return undefined;
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const sc = span.spanContext();
  return isSpanContextValid(sc) ? { traceId: sc.traceId, spanId: sc.spanId } : undefined;
}

/** The W3C `traceparent` of the active span, to keep on a row that another process picks up later. */
export function currentTraceparent(): string | undefined {
  if (!installed) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** Runs `fn` as a continuation of the trace `traceparent` names (a row's stored context), if any. */
export function withTraceparent<T>(traceparent: string | null | undefined, fn: () => T): T {
  if (!installed || !traceparent) return fn();
  return context.with(propagation.extract(context.active(), { traceparent }), fn);
}

/**
 * Runs `fn` in a new span (internal by default). Errors mark the span and are rethrown. Without
 * tracing, `fn` runs alone with a no-op span.
 */
export async function inSpan<T>(
  name: string,
  opts: { kind?: SpanKind; attributes?: Attributes; parentHeaders?: Record<string, string | string[] | undefined> },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  if (!installed) return fn(trace.getTracer(TRACER_NAME).startSpan(name));
  const parent = opts.parentHeaders ? propagation.extract(context.active(), opts.parentHeaders) : context.active();
  return trace
    .getTracer(TRACER_NAME)
    .startActiveSpan(
      name,
      { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes },
      parent,
      async (span) => {
        try {
          return await fn(span);
        } catch (err) {
          span.recordException(err instanceof Error ? err : String(err));
          span.setStatus({ code: SpanStatusCode.ERROR });
          throw err;
        } finally {
          span.end();
        }
      },
    );
}

/** Headers carrying the active context (`traceparent`), for an outgoing request made by hand. */
export function traceHeaders(): Record<string, string> {
  if (!installed) return {};
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** Interceptors for a Temporal client: the caller's context travels in each start's and signal's headers. */
export function temporalClientInterceptors(): ClientInterceptors | undefined {
  return installed?.clientInterceptors();
}

/** The worker's share: the activity interceptor, and the sink through which workflow spans leave the sandbox. */
export function workerTracing(): {
  activityInterceptors: ActivityInterceptorsFactory[];
  sinks: InjectedSinks<OpenTelemetrySinks>;
  /** Workflow interceptor modules to bundle (workflows/tracing.ts when on). */
  tracedWorkflows: boolean;
} {
  const tracing = installed;
  if (!tracing) {
    // Workflows are traced only when their start or signal carried a context (workflows/tracing.ts);
    // a traced client in front of an untraced worker still sends one, so the sink must exist.
    return {
      activityInterceptors: [],
      sinks: { exporter: { export: { fn: () => undefined } } },
      tracedWorkflows: false,
    };
  }
  return { activityInterceptors: [tracing.activityInterceptor], sinks: tracing.sinks, tracedWorkflows: true };
}

export { SpanKind, SpanStatusCode };
