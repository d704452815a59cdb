/**
 * The workflow interceptor modules bundled with workflows/ wherever a bundle is made (the worker,
 * its bundle child, the tests' one bundle per run): tracing (docs/operations.md "Tracing"), a
 * no-op for untraced runs, so one bundle serves traced and untraced workers alike.
 */
export const WORKFLOW_INTERCEPTOR_MODULES: readonly string[] = [require.resolve('../../workflows/tracing')];
