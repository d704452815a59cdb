/**
 * Child-process side of workflow-bundle.ts: bundles workflows/ with the SDK's webpack, with the
 * workflow interceptor modules named after argv[2], and writes the code to the file argv[2] names.
 * Run in its own process so that webpack's memory (about 110 MB that a process keeps once it has
 * bundled) never counts against the service.
 */
import fs from 'node:fs';
import { bundleWorkflowCode } from '@temporalio/worker';

async function main(): Promise<void> {
  const [out, ...interceptorModules] = process.argv.slice(2);
  if (!out) throw new Error('usage: workflow-bundle-child <output file> [workflow interceptor module…]');
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    workflowInterceptorModules: interceptorModules,
  });
  fs.writeFileSync(out, code);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
