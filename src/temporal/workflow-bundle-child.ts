/**
 * Child-process side of workflow-bundle.ts: bundles workflows/ with the SDK's webpack and writes
 * the code to the file named by argv[2]. Run in its own process so that webpack's memory (about
 * 110 MB that a process keeps once it has bundled) never counts against the service.
 */
import fs from 'node:fs';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_INTERCEPTOR_MODULES } from './workflow-interceptor-modules';

async function main(): Promise<void> {
  const out = process.argv[2];
  if (!out) throw new Error('usage: workflow-bundle-child <output file>');
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    workflowInterceptorModules: [...WORKFLOW_INTERCEPTOR_MODULES],
  });
  fs.writeFileSync(out, code);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
