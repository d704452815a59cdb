/**
 * The floor's worker process (bench/payment-floor.ts spawns it): the SDK worker with the options of
 * src/temporal/worker.ts that matter to its cost (a bounded sticky cache), on the floor workflows.
 * Prints `polling` once it polls. Environment: TEMPORAL_ADDRESS, TASK_QUEUE, RECEIVER_URL.
 */
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { floorActivities } from './activities';

async function main(): Promise<void> {
  const address = process.env.TEMPORAL_ADDRESS ?? '';
  const taskQueue = process.env.TASK_QUEUE ?? '';
  const receiverUrl = process.env.RECEIVER_URL ?? '';
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  // One Rust-core connection for the worker and the client that starts delivery runs, as the
  // service's own client uses (docs/performance.md "Where a charge's time goes").
  const connection = await NativeConnection.connect({ address });
  const client = new Client({ connection });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: require.resolve('./workflows'),
    activities: floorActivities(client, taskQueue, receiverUrl),
    maxCachedWorkflows: 200,
    maxConcurrentWorkflowTaskExecutions: 40,
  });
  process.once('SIGTERM', () => worker.shutdown());
  const running = worker.run();
  console.log('polling');
  await running;
  await connection.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
