/**
 * The workflow interceptor modules: tracing (docs/operations.md "Tracing"). The worker bundles them
 * when tracing is on; the tests' one bundle per run always has them. They delegate only for runs
 * whose start or signal carried a trace context, so a bundle with them runs untraced workflows as
 * one without, and histories replay on either.
 */
export const WORKFLOW_INTERCEPTOR_MODULES: readonly string[] = [require.resolve('../../workflows/tracing')];
