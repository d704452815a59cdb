/**
 * THE Temporal helper for every test of the project: the embedded server's own test helpers
 * (tools/embedded-temporal/README.md "Testing with it"), whose environment the run's last hook
 * tears down (test/support/root-hooks.ts).
 *
 * Example:
 *   const result = await withWorker(
 *     { workflowsPath: require.resolve('../../workflows'), activities: createActivities(deps) },
 *     ({ client, taskQueue }) => client.workflow.execute(chargeWorkflow, { taskQueue, workflowId, args: [input] }),
 *   );
 */
export * from '@pixflow/embedded-temporal/testing';

import { setWorkflowInterceptorModules } from '@pixflow/embedded-temporal/testing';
import { WORKFLOW_INTERCEPTOR_MODULES } from '../../src/temporal/workflow-interceptor-modules';

// The one bundle of workflows/ per run carries the worker's interceptor modules, as in production
// (tracing: a no-op for untraced runs; docs/operations.md "Tracing").
setWorkflowInterceptorModules(require.resolve('../../workflows'), WORKFLOW_INTERCEPTOR_MODULES);
